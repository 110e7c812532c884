"""Which conditions differ between ranks, evaluated in a few concrete "worlds".

Instead of reasoning symbolically about `is_main_process`, `rank == 1` or `local_rank != 0`, each
function is analysed once per representative process (a World). Equivalences and exclusions then
come for free: `is_main_process` and `process_index == 0` agree in every world, `rank == 0` and
`rank == 1` never hold together, and a condition tested twice takes the same arm both times.

A rank within a process group (`dist.get_rank(group)`, `group.rank()`, Megatron's
`get_tensor_model_parallel_rank()`) is another quantity: a test on it holds on several global
ranks. A scope's worlds give each process a rank in one group, the scope's "focus" (see
group_focus); the ranks in any other group are unknown there, since how groups cross each other
(a data-parallel group's members share their tensor-parallel rank) cannot be read off the code.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Callable, Mapping, Optional

import libcst as cst

from bcast_lint.analysis.expressions import argument_value, is_none, last_name
from bcast_lint.analysis.positions import node_code
from bcast_lint.analysis.signals import NOTHING
from bcast_lint.analysis.walk import Visitor, children

RANK = "rank"
LOCAL_RANK = "local_rank"
GROUP_RANK = "group:"  # followed by the group's key: "group:tensor_model_parallel", "group:self.pg"

_RANK_ATTRIBUTES = {
    "process_index": RANK, "rank": RANK, "global_rank": RANK,
    "local_process_index": LOCAL_RANK, "local_rank": LOCAL_RANK,
}
_RANK_NAMES = {"rank": RANK, "global_rank": RANK, "local_rank": LOCAL_RANK}
# Not `get_global_rank(group, r)`: it maps another rank's number, not this process's.
_RANK_METHODS = {"get_rank": RANK, "get_local_rank": LOCAL_RANK,
                 "get_node_local_rank": LOCAL_RANK}
_ENVIRONMENT_KEYS = {"RANK": RANK, "LOCAL_RANK": LOCAL_RANK}
# Well-known framework spellings of "this is the (local) main process": Accelerate's properties,
# Lightning's `trainer.is_global_zero`, transformers' `TrainerState.is_world_process_zero` (an
# attribute) and `Trainer.is_world_process_zero()` / `is_local_process_zero()` (methods).
_MAIN_PROPERTIES = {"is_main_process": "is_main_process", "is_local_main_process": "is_local_main_process",
                    "is_last_process": "is_last_process", "is_global_zero": "is_main_process",
                    "is_world_process_zero": "is_main_process",
                    "is_local_process_zero": "is_local_main_process"}
_MAIN_METHODS = {"is_world_process_zero": "is_main_process", "is_local_process_zero": "is_local_main_process"}
# Frameworks' functions that test for the main process, by their qualified names.
_MAIN_FUNCTIONS = {"is_main_process": frozenset({"mmengine.dist.is_main_process", "mmengine.dist.utils.is_main_process",
                                                 "mmcv.runner.is_main_process"})}
# Megatron-style `get_<group>_rank()` (parallel_state, mpu): the rank within that group.
_GROUP_RANK_GETTER = re.compile(r"get_(\w+)_rank$")
_NOT_GROUP_GETTERS = {"global", "local", "node_local", "world"}
# `get_tensor_model_parallel_src_rank()`, `get_pipeline_model_parallel_next_rank()`: the global
# rank of another member, not this process's rank in the group.
_OTHER_MEMBER_SUFFIXES = ("_src", "_dst", "_first", "_last", "_next", "_prev", "_global")
_MAX_RANK_LITERAL = 8  # bounds the number of worlds; larger literals are treated as unknown


@dataclass(frozen=True)
class World:
    """One process: its global rank, its rank on its node, how many processes there are, and its
    rank within the scope's focus group (`group`, a key; None when the scope has none).

    `data`: in a scope whose tests can differ between ranks through their data (a per-rank file
    check, the clock, a length computed from the rank: analysis.divergence), each process is
    modelled twice, as PARCOACH compares classes of processes: once where such operands hold
    (True) and once where they fail (False); None elsewhere."""

    rank: int
    local_rank: int
    size: int
    group_rank: int = 0
    group: Optional[str] = None
    data: Optional[bool] = None

    def value_of(self, quantity: str) -> Optional[int]:
        """The quantity's value here; None for a rank in a group other than the focus."""
        if quantity == RANK:
            return self.rank
        if quantity == LOCAL_RANK:
            return self.local_rank
        return self.group_rank if quantity == GROUP_RANK + (self.group or "") else None

    def has_property(self, name: str) -> bool:
        if name == "is_main_process":
            return self.rank == 0
        if name == "is_local_main_process":
            return self.local_rank == 0
        return self.rank == self.size - 1  # is_last_process


_WORLD_SIZES = frozenset({"get_world_size", "world_size", "num_processes", "WORLD_SIZE", "num_replicas"})


def names_world_size(expr: cst.BaseExpression) -> bool:
    """`dist.get_world_size()`, `world_size`, `accelerator.num_processes`, `int(os.environ["WORLD_SIZE"])`."""
    if isinstance(expr, cst.Call) and last_name(expr.func) == "int" and expr.args:
        return names_world_size(expr.args[0].value)
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        index = expr.slice[0].slice.value
        return isinstance(index, cst.SimpleString) and index.evaluated_value == "WORLD_SIZE"
    return last_name(expr) in _WORLD_SIZES


def make_worlds(largest_literal: int, group: Optional[str] = None,
                largest_group_literal: int = 0, data: bool = False) -> tuple[World, ...]:
    """Ranks 0..k on a first node, where k exceeds every rank the code compares with, plus the
    first process of a second node, whose local rank is 0 but global rank is not. With a focus
    group, each of them once per group rank 0..g (g exceeding the group ranks compared with):
    a group rank does not tell the global rank. With `data`, each of them once where the tests
    that differ between ranks through their data hold, and once where they fail."""
    k = min(max(largest_literal, 0), _MAX_RANK_LITERAL) + 1
    size = k + 2
    base = (*(World(rank, rank, size) for rank in range(k + 1)), World(k + 1, 0, size))
    if group is not None:
        g = min(max(largest_group_literal, 0), _MAX_RANK_LITERAL) + 1
        base = tuple(World(w.rank, w.local_rank, size, group_rank, group)
                     for group_rank in range(g + 1) for w in base)
    if not data:
        return base
    return tuple(dataclasses.replace(w, data=held) for held in (True, False) for w in base)


class RankConditions:
    """Evaluates expressions that depend on the process's rank.

    `qualified_names` resolves a call's target, so `dist.get_rank()` is recognised by what it is.
    `rank_variables` maps names assigned from a rank expression to the quantity they hold.
    """

    def __init__(self, qualified_names: Callable[[cst.CSTNode], set[str]],
                 helpers: Optional[Callable[[cst.CSTNode, "World"], Optional[bool]]] = None,
                 none_helpers: Optional[Callable[[cst.CSTNode, "World"], bool]] = None,
                 typed: Optional[Callable[[cst.Attribute], Optional[str]]] = None):
        """`helpers`: the value in a world of a call of a project function that returns a rank
        test (from its summary), or None; `none_helpers`: whether such a call returns None there
        on every path (`if not is_main: return None`); `typed`: the main-process property an
        attribute equals given what its receiver is (`args.should_save` of a TrainingArguments),
        where the name alone would say nothing (`control.should_save` is no rank test)."""
        self._qualified_names = qualified_names
        self._helpers = helpers
        self._none_helpers = none_helpers
        self._typed = typed
        self.rank_variables: dict[str, str] = dict(_RANK_NAMES)
        # Names that hold another rank's number, whatever they are called (see other_rank_names).
        self.other_ranks: frozenset = frozenset()
        self.constants: dict[str, int] = {}  # module-level names bound once, to an integer
        # Module-level names bound once to a literal table (`SHARDS = {0: [5, 7], 1: [8, 3, 13]}`)
        # -> whether its entries differ in length: a rank's own entry is its own data.
        self.tables: dict[str, bool] = {}
        # Such tables whose entries hold sequences whose lengths differ from entry to entry at one
        # place (`{0: [[1.0] * 9, [2.0]], 1: [[3.0], [4.0]]}`): the items a rank iterates differ in length.
        self.uneven_item_tables: frozenset[str] = frozenset()
        # Module-level names bound once to a list or tuple of one number repeated (`[8, 8, 8]`).
        self.uniform_tables: frozenset[str] = frozenset()
        # Module-level names bound once to a list or tuple literal -> how many items it holds.
        self.table_lengths: dict[str, int] = {}
        # The module's functions that return one item per item of such a name -> the name.
        self.table_copies: dict[str, str] = {}
        # The module's functions -> the exceptions they catch and carry on from (raising.absorbed_exceptions).
        self.absorbed: dict[str, frozenset] = {}
        # The module's functions whose work can raise on what they are handed (raising.raising_functions).
        self.raising_functions: frozenset = frozenset()
        # The module's context managers that swallow what their block raises (raising.swallowing_managers).
        self.swallowing: dict[str, frozenset] = {}
        # The module's functions and classes -> the parameters that seed a generator (generators.py).
        self.seeded_parameters: dict[str, tuple] = {}  # name -> generators.Seeding
        # A backward of the module can leave each rank its own gradients (gradients.gradients_kept_apart).
        self.gradients_apart = False
        # A module function's name -> its parameters and those on which its work can raise (raising.failing_parameters).
        self.failing_of: Callable[[str], tuple] = lambda name: ((), frozenset())
        # The module seeds the process's random generators with the rank (words.seeds_per_rank).
        self.seeded_per_rank = False
        # The global generators the script never seeds, which differ per process (words.unseeded_generators).
        self.unseeded: frozenset[str] = frozenset()
        # The line where the module sets a logging level that differs between ranks, or None.
        self.logging_per_rank: Optional[int] = None
        # Where the process sets an environment variable under a test on the rank, or None
        # (analysis.environment; ModuleAnalysis.environment_where).
        self.environment_where: Callable[[str], Optional[str]] = lambda variable: None
        # Attribute names the module's methods set from the rank's own batch a framework hands them
        # (`self.last_loss = loss.item()` in a Trainer's `compute_loss`) -> why it differs.
        self.data_attributes: dict[str, str] = {}
        # (`self.<name>` read in a method, the method) -> why what the class's property of that name
        # returns differs between ranks (ModuleAnalysis._property_why), where the module has one.
        self.property_value: Optional[Callable[[cst.Attribute, cst.CSTNode], Optional[str]]] = None
        # (`norm.frozen`, the scope reading it) -> why the attribute of an object of one of the
        # module's classes differs between ranks as its methods leave it (ModuleAnalysis._instance_why).
        self.instance_value: Optional[Callable[[cst.Attribute, cst.CSTNode], Optional[str]]] = None
        # (`metric.hits`, the scope reading it) -> why a torchmetrics metric's state read from outside
        # the metric differs between ranks (ModuleAnalysis._metric_state_why), where the module has one.
        self.metric_state: Optional[Callable[[cst.Attribute, cst.CSTNode], Optional[str]]] = None
        # What the module's signal handlers set (signals.signalled): it differs between ranks.
        self.signalled = NOTHING
        # Keys the module's LightningModule logs without sync_dist (logged_metrics.unsynced_metrics):
        # read back from the trainer's metrics, each rank's own value.
        self.unsynced_metrics: frozenset[str] = frozenset()
        # The line where the module puts a model in eval mode on some ranks only and leaves it there
        # (training_mode.switched_off_per_rank): `self.training` then differs between ranks.
        self.training_off: Optional[int] = None
        # The module uses Lightning, whose loggers hand `logger.experiment` to global rank 0 alone
        # (`@rank_zero_experiment`: the other ranks get a `_DummyExperiment`).
        self.lightning_loggers = False
        # Why the module's experiment trackers exist on some ranks only, or None: `wandb.init` under a
        # test on the rank, or Accelerate's `init_trackers` (main process only): `wandb.run`,
        # `accelerator.trackers` then differ between ranks.
        self.trackers_on_some_ranks: Optional[str] = None
        # (function, name) bound to an Accelerator made with even batches off (uneven_batches).
        self.uneven_accelerators: frozenset = frozenset()
        # `self.seen` for `self.seen = Counter()` (or a defaultdict): `self.seen[k] += 1` adds a key.
        self.counters: frozenset[str] = frozenset()
        # Files the module writes only under a test on the rank (written_files): key -> line of the write.
        self.files_written: dict[str, int] = {}
        # (class, line) of a forward that runs a submodule for some batches only (routed_modules).
        self.routed_forward: Optional[tuple[str, int]] = None
        # `is_main` -> `self.rank == 0` for a module's `@property def is_main(self): return ...`
        # or its one `cfg.is_main = rank == 0`: reading the attribute is the test it holds.
        self.attributes: dict[str, cst.BaseExpression] = {}
        # `on_main` -> `accelerator.process_index == 0` for a nested `def on_main(): return ...`:
        # calling it is the test it returns.
        self.local_functions: dict[str, cst.BaseExpression] = {}
        # Operands of tests, and `try` statements, whose outcome can differ between ranks through
        # their data, each with why (analysis.divergence): the worlds' `data` decides them.
        self.varying: dict[cst.CSTNode, str] = {}

    def returns_none(self, expr: cst.BaseExpression, world: "World") -> bool:
        """Whether `expr` calls a project function that returns None in `world`."""
        return self._none_helpers is not None and isinstance(expr, cst.Call) and self._none_helpers(expr, world)

    def learn_assignment(self, name: str, value: cst.BaseExpression) -> None:
        quantity = self.quantity(value)
        if quantity:
            self.rank_variables[name] = quantity

    def quantity(self, expr: cst.BaseExpression) -> Optional[str]:
        """RANK or LOCAL_RANK when `expr` evaluates to the process's (local) rank, GROUP_RANK
        and the group's key for its rank within a group."""
        if isinstance(expr, cst.Name):
            return None if expr in self.other_ranks else self.rank_variables.get(expr.value)
        if isinstance(expr, cst.Attribute):
            held = self.attributes.get(expr.attr.value)
            if expr.attr.value not in _RANK_ATTRIBUTES and held is not None and held is not expr \
                    and not isinstance(held, cst.Attribute):
                return self.quantity(held)  # `self.leader = int(os.environ["LOCAL_RANK"])`, set once
            return _RANK_ATTRIBUTES.get(expr.attr.value)
        if isinstance(expr, cst.Subscript):
            return _environment_quantity(expr)
        if isinstance(expr, cst.Call):
            return self._call_quantity(expr)
        return None

    def _call_quantity(self, call: cst.Call) -> Optional[str]:
        func = call.func
        if isinstance(func, cst.Name) and func.value == "int" and len(call.args) >= 1:
            return self.quantity(call.args[0].value)
        if _is_environment_lookup(func) and call.args:
            return _literal_key(call.args[0].value)
        method = last_name(func)
        if method == "get_local_rank" and call.args:
            return GROUP_RANK + group_key(call)  # DeviceMesh.get_local_rank(mesh_dim): within one dimension
        if method in _RANK_METHODS:
            qualified = self._qualified_names(call)
            if not qualified or any(_RANK_METHODS.get(q.rsplit(".", 1)[-1]) for q in qualified):
                group = _group_argument(call) if method == "get_rank" else None
                return GROUP_RANK + group_key(group) if group is not None else _RANK_METHODS[method]
        if method == "rank" and not call.args and isinstance(func, cst.Attribute):
            return GROUP_RANK + group_key(func.value)  # ProcessGroup.rank()
        getter = _GROUP_RANK_GETTER.match(method or "")
        if getter and _is_own_group_rank(getter.group(1)) and all(arg.keyword for arg in call.args):
            return GROUP_RANK + getter.group(1)
        return None

    def property_name(self, expr: cst.BaseExpression) -> Optional[str]:
        """`is_main_process`-like properties (and HF Trainer's equivalent methods), by the
        Accelerate property they equal."""
        if isinstance(expr, cst.Attribute) and expr.attr.value in _MAIN_PROPERTIES:
            return _MAIN_PROPERTIES[expr.attr.value]
        if isinstance(expr, cst.Attribute) and self._typed is not None:
            return self._typed(expr)
        if isinstance(expr, cst.Call) and not expr.args:
            name = last_name(expr.func) or ""
            if name in _MAIN_FUNCTIONS and self._qualified_names(expr) & _MAIN_FUNCTIONS[name]:
                return "is_main_process"  # mmengine.dist.is_main_process(): get_rank() == 0
            return _MAIN_METHODS.get(name)
        return None

    def evaluate(self, expr: cst.BaseExpression, world: World,
                 aliases: Optional[Mapping[str, cst.BaseExpression]] = None) -> Optional[bool]:
        """True/False when `expr`'s truth is decided by the rank, None when it is not known.
        `aliases`: names known to hold one value where `expr` is read (`is_main = rank == 0`)."""
        return self._evaluate(expr, world, False, aliases)

    def sized_for_the_job(self, expr: cst.BaseExpression) -> bool:
        """`ROWS[rank::world]` or `range(rank, len(ROWS), world)` over a module's literal table of an
        even number of items, or `range(rank, 16, world)` to an even literal or module constant:
        taken as written for the job's number of processes, so each rank gets as many. (An odd
        count is uneven for every even number of processes; a table whose length is not written
        down, a dataset or a file's lines, stays unknown.)"""
        dealt = dealt_share(expr)
        if dealt is None:
            return self._dealt_by_literal_step(expr)
        value, is_count = dealt
        if is_count:
            count = integer_literal(value) if isinstance(value, cst.Integer) else self.constants.get(
                value.value if isinstance(value, cst.Name) else "")
        else:
            count = self.table_lengths.get(self._table_named(value) or "")
        return count is not None and count % 2 == 0

    def _dealt_by_literal_step(self, expr: cst.BaseExpression) -> bool:
        """`range(rank, 16, 2)`, `ROWS[rank::2]`: a program written for as many processes as its
        literal step, where every rank below it gets as many items when the step divides the count."""
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "range" \
                and len(expr.args) == 3:
            start, stop, step = (arg.value for arg in expr.args)
            count = integer_literal(stop) if isinstance(stop, cst.Integer) else \
                self.constants.get(stop.value if isinstance(stop, cst.Name) else "")
        elif isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Slice) \
                and expr.slice[0].slice.upper is None and expr.slice[0].slice.lower is not None:
            start, step = expr.slice[0].slice.lower, expr.slice[0].slice.step
            count = self.table_lengths.get(self._table_named(expr.value) or "")
        else:
            return False
        stride = integer_literal(step) if step is not None else None
        return stride is not None and stride > 1 and count is not None and count % stride == 0 \
            and self.quantity(start) is not None

    def _table_named(self, expr: cst.BaseExpression) -> Optional[str]:
        """`ROWS` for `ROWS`, and for `rows()` where the module's `rows` returns one item per row."""
        if isinstance(expr, cst.Name):
            return expr.value
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and not expr.args:
            return self.table_copies.get(expr.func.value)
        return None

    def decide(self, expr: cst.BaseExpression, world: World,
               aliases: Optional[Mapping[str, cst.BaseExpression]] = None) -> Optional[bool]:
        """As evaluate; in a world with `data` (World), the operands of tests that differ between
        ranks through their data (`varying`) hold where it is True and fail where it is False."""
        return self._evaluate(expr, world, world.data is not None, aliases)

    def _evaluate(self, expr: cst.BaseExpression, world: World, data: bool, aliases) -> Optional[bool]:
        if data and expr in self.varying:
            return world.data
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            inner = self._evaluate(expr.expression, world, data, aliases)
            return None if inner is None else not inner
        if isinstance(expr, cst.BooleanOperation):
            return self._evaluate_boolean(expr, world, data, aliases)
        if isinstance(expr, cst.Comparison):
            return self._evaluate_comparison(expr, world)
        if isinstance(expr, cst.IfExp):
            return self._evaluate_choice(expr, world, data, aliases)
        if isinstance(expr, cst.Name) and aliases and expr.value in aliases:
            return self._evaluate(aliases[expr.value], world, data, None)
        setup = setup_truth(expr)  # `dist.is_initialized()`: true wherever a collective runs
        if setup is not None:
            return setup
        prop = self.property_name(expr)
        if prop:
            return world.has_property(prop)
        quantity = self.quantity(expr)
        if quantity:
            value = world.value_of(quantity)
            return None if value is None else value != 0
        helper = self._helpers(expr, world) if isinstance(expr, cst.Call) and self._helpers is not None else None
        if helper is not None:
            return helper
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and not expr.args:
            return self._evaluate_held(self.local_functions, expr.func.value, world, data)
        if isinstance(expr, cst.Attribute):
            held = self._evaluate_held(self.attributes, expr.attr.value, world, data)
            absent = self._held_none(expr.attr.value, world) if held is None else None
            return held if absent is None else not absent  # `if self.writer:`
        return None

    def _evaluate_held(self, definitions: dict, name: str, world: "World", data: bool) -> Optional[bool]:
        """The value in `world` of what a definition holds, if there is one."""
        if name not in definitions:
            return None
        held = definitions.pop(name)  # out while it is read: no recursion
        try:
            return self._evaluate(held, world, data, None)
        finally:
            definitions[name] = held

    def _held_none(self, name: str, world: "World") -> Optional[bool]:
        """Whether the one value the module gives attribute `name` is None in `world`:
        `self.writer = SummaryWriter() if rank == 0 else None`."""
        held = self.attributes.get(name)
        if isinstance(held, cst.IfExp):
            test = self.evaluate(held.test, world)
            if test is None:
                return None
            held = held.body if test else held.orelse
        if held is None:
            return None
        if is_none(held):
            return True
        return False if _is_made_object(held) else None

    def _evaluate_boolean(self, expr: cst.BooleanOperation, world: World, data: bool, aliases) -> Optional[bool]:
        left = self._evaluate(expr.left, world, data, aliases)
        # A world's `data` stands for one data test: a second one (`stalled and not self.saved`) is
        # another, unknown there, not the same outcome again (which would make the `and` false everywhere).
        right = self._evaluate(expr.right, world, data and not self._reads_varying(expr.left), aliases)
        if isinstance(expr.operator, cst.And):
            if left is False or right is False:
                return False
            return None if left is None or right is None else True
        if left is True or right is True:
            return True
        return None if left is None or right is None else False

    def _reads_varying(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` holds an operand of a test that differs between ranks through data."""
        return expr in self.varying or any(self._reads_varying(child) for child in children(expr))

    def _evaluate_choice(self, expr: cst.IfExp, world: World, data: bool, aliases) -> Optional[bool]:
        """`a if local else b`: the arm the rank picks, or the value both arms agree on."""
        test = self._evaluate(expr.test, world, data, aliases)
        body = self._evaluate(expr.body, world, data, aliases) if test is not False else None
        orelse = self._evaluate(expr.orelse, world, data, aliases) if test is not True else None
        if test is None:
            return body if body == orelse else None
        return body if test else orelse

    def _evaluate_comparison(self, expr: cst.Comparison, world: World) -> Optional[bool]:
        left = expr.left
        result: Optional[bool] = True
        for target in expr.comparisons:
            outcome = self._compare(left, target.operator, target.comparator, world)
            if outcome is False:
                return False
            if outcome is None:
                result = None
            left = target.comparator
        return result

    def _compare(self, left, operator, right, world: World) -> Optional[bool]:
        if isinstance(operator, (cst.Is, cst.IsNot)) and is_none(right) and isinstance(left, cst.Attribute):
            absent = self._held_none(left.attr.value, world)  # `self.writer is None`
            return None if absent is None else absent == isinstance(operator, cst.Is)
        if isinstance(operator, (cst.Is, cst.IsNot)) and is_none(right) and self.quantity(left):
            # `os.environ.get("RANK") is not None`: whether the launcher set it, alike on every rank.
            return isinstance(operator, cst.IsNot)
        left_value = self._operand(left, world)
        if isinstance(operator, (cst.In, cst.NotIn)):
            members = _integer_collection(right)
            if left_value is None or members is None or not self.quantity(left):
                return None
            return (left_value in members) == isinstance(operator, cst.In)
        if _read_from_environment(left) and _digits(right) is not None:
            right_value = _digits(right)  # `os.environ["RANK"] == "0"`: the variable's text
        elif isinstance(operator, (cst.Equal, cst.NotEqual)) and _is_string(left, right, self.quantity):
            return isinstance(operator, cst.NotEqual)  # `rank == "cpu"`: a rank is no string
        else:
            right_value = self._operand(right, world)
        if left_value is None or right_value is None:
            return None
        if not (self.quantity(left) or self.quantity(right)):
            return None  # two literals: not a rank condition
        return _apply(operator, left_value, right_value)

    def _operand(self, expr: cst.BaseExpression, world: World) -> Optional[int]:
        quantity = self.quantity(expr)
        if quantity:
            return world.value_of(quantity)
        if names_world_size(expr):
            return world.size
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
            left, right = self._operand(expr.left, world), self._operand(expr.right, world)
            if left is None or right is None:
                return None  # `world_size - 1`: the last rank
            return left + right if isinstance(expr.operator, cst.Add) else left - right
        return self._integer(expr)

    def _integer(self, expr: cst.BaseExpression) -> Optional[int]:
        """An integer literal, or a module constant holding one (`LOADER_RANK = 1`)."""
        if isinstance(expr, cst.Name) and expr.value in self.constants:
            return self.constants[expr.value]
        return integer_literal(expr)

    def group_focus(self, scope: cst.CSTNode, call_groups: list) -> tuple[Optional[str], int]:
        """The group whose ranks a scope's worlds model, and the largest group rank compared with.

        The focus is the one group whose rank the scope compares, provided every collective there
        that names a group (`call_groups`: their keys, None for no `group=`) names that one: a test
        on the tensor-parallel rank in front of a collective over the data-parallel group selects
        whole data-parallel groups, which no single group-rank axis can tell."""
        compared: dict[str, list[int]] = {}
        for comparison in _comparisons(scope):
            operands = [comparison.left, *(t.comparator for t in comparison.comparisons)]
            for operand in operands:
                quantity = self.quantity(operand)
                if quantity and quantity.startswith(GROUP_RANK):
                    values = [integer_literal(o) for o in operands]
                    compared.setdefault(quantity[len(GROUP_RANK):], []).extend(
                        v for v in values if v is not None)
        named = {key for key in call_groups if key is not None}
        if len(compared) != 1 or not named <= set(compared):
            return None, 0
        key, literals = compared.popitem()
        return key, max(literals, default=0)

    def compared_literals(self, expr: cst.BaseExpression) -> list[int]:
        """Integers a rank is compared with in `expr`: they decide which worlds are needed."""
        found = []
        for comparison in _comparisons(expr):
            operands = [comparison.left, *(t.comparator for t in comparison.comparisons)]
            if any(self.quantity(operand) for operand in operands):
                for operand in operands:
                    found.extend(_integer_collection(operand) or [])
                    value = self._integer(operand)
                    if value is not None:
                        found.append(value)
        return found


def _is_made_object(value: cst.BaseExpression) -> bool:
    """A value that is never None: a literal, a container, or an instance made by calling a
    class (`SummaryWriter(log_dir)`, named in CapWords)."""
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.List, cst.Tuple, cst.Dict, cst.Set)):
        return True
    name = last_name(value.func) if isinstance(value, cst.Call) else None
    return bool(name) and name[0].isupper() and not name.isupper()


def other_rank_names(module: cst.Module, conditions: RankConditions) -> frozenset:
    """The uses of a function's parameter named like a rank (`rank`, `local_rank`) that the
    function compares with the process's own rank (`dist.get_rank() == rank`): there the name
    holds the rank of a leader or a source, not this process's."""
    finder = _OtherRankParameters(conditions)
    finder.walk(module)
    return frozenset(finder.uses)


class _OtherRankParameters(Visitor):
    def __init__(self, conditions: RankConditions) -> None:
        self._conditions = conditions
        self.uses: list = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        names = {param.name.value for param in (*node.params.posonly_params, *node.params.params,
                                                *node.params.kwonly_params)
                 if param.name.value in self._conditions.rank_variables}
        if not names:
            return
        finder = _NameUses(names)
        finder.walk(node.body)
        compared = {name for name, others in finder.compared.items()
                    if any(self._conditions.quantity(other) for other in others)}
        self.uses.extend(use for use in finder.uses if use.value in compared)


class _NameUses(Visitor):
    """The uses of some names in a body, and what each is compared with (`==`, `!=`)."""

    def __init__(self, names: set) -> None:
        self._names = names
        self.uses: list = []
        self.compared: dict[str, list] = {}

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self._names:
            self.uses.append(node)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
            return
        left, right = node.left, node.comparisons[0].comparator
        for one, other in ((left, right), (right, left)):
            if isinstance(one, cst.Name) and one.value in self._names and not (
                    isinstance(other, cst.Name) and other.value in self._names):
                self.compared.setdefault(one.value, []).append(other)


def boolean_leaves(test: cst.BaseExpression) -> list:
    """The operands of `not`, `and` and `or` in a test, down to the first other expression."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return boolean_leaves(test.expression)
    if isinstance(test, cst.BooleanOperation):
        return [*boolean_leaves(test.left), *boolean_leaves(test.right)]
    return [test]


def group_key(expr: cst.BaseExpression) -> str:
    """A name for the group an expression gives: `tensor_model_parallel` for Megatron's
    `get_tensor_model_parallel_group()` (matching `get_tensor_model_parallel_rank()`), else the
    code (`self.tp_group`)."""
    if isinstance(expr, cst.Call):
        getter = re.match(r"get_(\w+)_group$", last_name(expr.func) or "")
        if getter:
            return getter.group(1)
    return node_code(expr)


def _is_own_group_rank(group: str) -> bool:
    return group not in _NOT_GROUP_GETTERS and not group.endswith(_OTHER_MEMBER_SUFFIXES)


def _group_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The group of `dist.get_rank(group)` / `get_rank(group=g)`; None for the world."""
    group = argument_value(call, 0, "group")
    return None if group is None or is_none(group) else group


def dealt_share(expr: cst.BaseExpression) -> Optional[tuple[cst.BaseExpression, bool]]:
    """What a share dealt by rank is taken from, and whether that is a count: `items` for
    `items[rank::world]` and `range(start, len(items), world)`; `16` for `range(rank, 16, world)`."""
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1:
        index = expr.slice[0].slice
        dealt = isinstance(index, cst.Slice) and index.upper is None and index.step is not None \
            and not isinstance(index.step, cst.Integer)
        return (expr.value, False) if dealt else None
    if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "range"
            and len(expr.args) == 3 and not isinstance(expr.args[2].value, cst.Integer)):
        return None
    stop = expr.args[1].value
    if isinstance(stop, cst.Call) and isinstance(stop.func, cst.Name) and stop.func.value == "len" and stop.args:
        return stop.args[0].value, False
    return (stop, True) if not isinstance(expr.args[0].value, cst.BinaryOperation) else None


def integer_literal(expr: cst.BaseExpression) -> Optional[int]:
    if isinstance(expr, cst.Integer):
        try:
            return int(expr.value, 0)
        except ValueError:
            return None
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        value = integer_literal(expr.expression)
        return None if value is None else -value
    return None


def _read_from_environment(expr: cst.BaseExpression) -> bool:
    """`os.environ["RANK"]`, `os.environ.get("RANK", "0")`, `os.getenv("RANK")`: the variable's text."""
    if isinstance(expr, cst.Subscript):
        return _environment_quantity(expr) is not None
    return isinstance(expr, cst.Call) and _is_environment_lookup(expr.func)


def _digits(expr: cst.BaseExpression) -> Optional[int]:
    """The number a string literal of digits spells (`"0"`), or None."""
    if isinstance(expr, cst.SimpleString):
        text = expr.evaluated_value
        return int(text) if isinstance(text, str) and text.isdigit() else None
    return None


def _is_string(left: cst.BaseExpression, right: cst.BaseExpression, quantity) -> bool:
    """One side is the rank, the other a string literal."""
    return any(isinstance(a, cst.SimpleString) and quantity(b) for a, b in ((left, right), (right, left)))


def _integer_collection(expr: cst.BaseExpression) -> Optional[list[int]]:
    if not isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return None
    values = [integer_literal(element.value) for element in expr.elements]
    return None if any(v is None for v in values) else values


def _apply(operator, left: int, right: int) -> Optional[bool]:
    table = {
        cst.Equal: left == right, cst.NotEqual: left != right, cst.LessThan: left < right,
        cst.LessThanEqual: left <= right, cst.GreaterThan: left > right,
        cst.GreaterThanEqual: left >= right, cst.Is: left == right, cst.IsNot: left != right,
    }
    return table.get(type(operator))


def _is_environment_lookup(func: cst.BaseExpression) -> bool:
    """`os.environ.get` or `os.getenv`."""
    if isinstance(func, cst.Attribute) and func.attr.value == "getenv":
        return True
    return (isinstance(func, cst.Attribute) and func.attr.value == "get"
            and last_name(func.value) == "environ")


def _environment_quantity(expr: cst.Subscript) -> Optional[str]:
    if last_name(expr.value) != "environ" or len(expr.slice) != 1:
        return None
    index = expr.slice[0].slice
    return _literal_key(index.value) if isinstance(index, cst.Index) else None


def _literal_key(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        return _ENVIRONMENT_KEYS.get(expr.evaluated_value)
    return None


def _comparisons(node: cst.CSTNode) -> list[cst.Comparison]:
    collector = _ComparisonCollector()
    collector.walk(node)
    return collector.found


class _ComparisonCollector(Visitor):
    def __init__(self) -> None:
        self.found: list[cst.Comparison] = []

    def visit_Comparison(self, comparison: cst.Comparison) -> None:
        self.found.append(comparison)


def setup_truth(test: cst.BaseExpression) -> Optional[bool]:
    """The value, in a job of several processes, of a test that sets up distributed code:
    `dist.is_initialized()`, `world_size > 1`, `args.distributed`, `distributed_type != NO`.
    Code that runs collectives runs where these hold; None for any other test."""
    if isinstance(test, cst.Call) and last_name(test.func) in ("is_initialized", "is_available",
                                                               "is_torchelastic_launched"):
        return True
    if isinstance(test, (cst.Name, cst.Attribute)) and (last_name(test) or "").endswith("distributed"):
        return True
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    operator, right = test.comparisons[0].operator, test.comparisons[0].comparator
    if last_name(right) == "NO" and isinstance(operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)):
        return isinstance(operator, (cst.NotEqual, cst.IsNot))  # distributed_type != DistributedType.NO
    if names_world_size(test.left) and isinstance(right, cst.Integer):
        outcomes = {_compare_sizes(operator, size, int(right.value, 0)) for size in (2, 64)}
        return outcomes.pop() if len(outcomes) == 1 else None
    return None


def _compare_sizes(operator, size: int, literal: int) -> Optional[bool]:
    table = {cst.Equal: size == literal, cst.NotEqual: size != literal, cst.LessThan: size < literal,
             cst.LessThanEqual: size <= literal, cst.GreaterThan: size > literal,
             cst.GreaterThanEqual: size >= literal}
    return table.get(type(operator))
