"""ModuleAnalysis: everything the rules need to know about one parsed module, computed once.

The expensive parts (LibCST's qualified-name metadata, the per-world data flow) are paid only for
modules that contain a call named like a collective, and only for the scopes that contain one.
"""

from __future__ import annotations

import ast
import os
import re
import textwrap
import weakref
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator, Optional, Sequence, TypeVar

import libcst as cst
from libcst.metadata import CodePosition, CodeRange

from bcast_lint.analysis import apis, frameworks, hooks
from bcast_lint.analysis.attributes import ClassAttributes
from bcast_lint.analysis.bindings import Bindings
from bcast_lint.analysis.context import FileContext, calls_super
from bcast_lint.analysis.environment import set_per_rank
from bcast_lint.analysis.callers import bound_arguments, parameter_positions, varying_parameters
from bcast_lint.analysis.divergence import (AGREED, COMPUTED_FROM_RANK, CONTROL, COUNTED_FROM_RANK, DATA, ENVIRONMENT,
                                            LENGTH_KEY, METRIC_STATE, NAMED_AFTER_RANK, RANK, UNEVEN_PIECE, Divergence,
                                            Parameters, RankKind, divergence_of, handed_arguments, is_data_reason,
                                            makes_counter, passed_as, returned_by)
from bcast_lint.analysis.exits import ScopeExits, exiting_functions, scope_exits
from bcast_lint.analysis.expressions import (argument, argument_value, attribute_key, is_none, is_self_attribute,
                                             last_name, literal_items, names_in_payload, payload_attributes, self_name)
from bcast_lint.analysis.names import ImportResolver, dotted_parts, import_bindings, root_name
from bcast_lint.analysis.flow import (ASSIGNED, OTHER, UNBOUND, Definition, Env, final_env,
                                      merge_envs, walk_scope)
from bcast_lint.analysis.ranks import (LOCAL_RANK, RankConditions, World, group_key, other_rank_names,
                                       integer_literal, make_worlds)
from bcast_lint.analysis.positions import StatementPositions, node_code
from bcast_lint.analysis.project import FunctionRef, ModuleIndex, Project
from bcast_lint.analysis.logged_metrics import (METRICS_DICTIONARIES, monitoring_callbacks, synced_epoch_metrics,
                                                unsynced_metrics)
from bcast_lint.analysis.routed_modules import routed_forward
from bcast_lint.analysis.signals import signalled
from bcast_lint.analysis.generators import seeded_parameters
from bcast_lint.analysis.gradients import gradients_kept_apart
from bcast_lint.analysis.raising import (absorbed_exceptions, failing_parameters, raising_functions,
                                        swallowing_managers)
from bcast_lint.analysis.summaries import CallChain, Summaries, Summary
from bcast_lint.analysis.syntax import called_name, parsed
from bcast_lint.analysis.training_arguments import TrainingArgumentsTests
from bcast_lint.analysis.training_mode import switched_off_per_rank
from bcast_lint.analysis.written_files import files_written_on_some_ranks
from bcast_lint.analysis.uneven_batches import uneven_accelerators
from bcast_lint.analysis.walk import Visitor, calls_in, every_call, every_node, is_bare_call, names_read, path_to
from bcast_lint.analysis.words import names_collective, names_rank, seeds_per_rank, unseeded_generators
from bcast_lint.source import Source

# `name(`: the names a text calls, found once (analysis.environment).
_CALLED_NAME = re.compile(r"(?<!def )(?<!class )\b(\w+)\(")
_MAIN_FIRST_METHODS = {"main_process_first", "local_main_process_first"}
_ACCELERATOR_CLASSES = {"Accelerator", "PartialState", "AcceleratorState"}
T = TypeVar("T")


@dataclass(eq=False)
class CallSite:
    """One call of a known collective, where it stands, and what reaches it in each world. A
    property that runs one is read, not called: its `call` is the cst.Attribute read, with no
    arguments."""

    call: cst.Call
    api: apis.Api
    scope: cst.CSTNode  # the Module, FunctionDef or ClassDef whose body holds it
    statement: cst.CSTNode  # the innermost statement holding it
    main_process_first: Optional[cst.With] = None
    rank_decorator: Optional[cst.Decorator] = None
    reached: dict = field(default_factory=dict)  # World -> Env, for the worlds that reach it

    @property
    def payload(self) -> Optional[cst.BaseExpression]:
        """The value being broadcast (the first argument, or a wrapper's broadcast parameter)."""
        if not isinstance(self.call, cst.Call):
            return None
        if self.api.payload_keyword is not None:
            return argument_value(self.call, self.api.payload_position, self.api.payload_keyword)
        first = argument(self.call, 0)
        if first is None:
            for arg in self.call.args:
                if arg.keyword is not None and arg.keyword.value in ("tensor", "object_list", "self"):
                    return arg.value
            return None
        return first.value

    @property
    def source(self) -> Optional[cst.BaseExpression]:
        if not isinstance(self.call, cst.Call):
            return None
        return argument_value(self.call, self.api.src_position, self.api.src_keyword)

    @property
    def group_argument(self) -> Optional[cst.Arg]:
        """The `group` argument as written, by keyword or at the API's position for it."""
        return argument(self.call, self.api.group_position, "group") if isinstance(self.call, cst.Call) else None

    @property
    def group(self) -> Optional[cst.BaseExpression]:
        """The `group` the collective runs over; None for the default (every rank)."""
        group = self.group_argument
        return None if group is None or is_none(group.value) else group.value

    @property
    def source_rank(self) -> Optional[int]:
        """The source rank when it is a literal or the API's default, else None."""
        if self.source is None:
            return self.api.default_src
        return integer_literal(self.source)


@dataclass(frozen=True)
class AttributeName:
    """A broadcast payload such as `self.weights`, which the data flow follows like a local named
    "self.weights" (see _attribute_entry): `value` is that name, as for a cst.Name."""

    value: str
    node: cst.Attribute


@dataclass(frozen=True)
class RankSplit:
    broken_worlds: tuple[World, ...]
    broken_definitions: tuple[Definition, ...]  # those that make it broken there
    fine_definitions: tuple[Definition, ...]
    where: str  # e.g. "where 'accelerator.is_main_process' is false"


@dataclass(frozen=True)
class Coverage:
    """How much of a module's distributed code the analysis could read."""

    analysed: int = 0  # collective calls (and calls of collective-running project functions)
    unresolved: tuple[tuple[int, str], ...] = ()  # (line, called text) named like a collective
    frameworks: tuple[tuple[str, int, int], ...] = ()  # (framework, analysed, unresolved) of those

    @classmethod
    def merged(cls, parts: Sequence["Coverage"]) -> "Coverage":
        """The coverage of a module linted in parts (bcast_lint.parts), from each part's."""
        if len(parts) == 1:
            return parts[0]
        by_framework: dict[str, tuple[int, int]] = {}
        for name, analysed, unresolved in (entry for part in parts for entry in part.frameworks):
            before = by_framework.get(name, (0, 0))
            by_framework[name] = (before[0] + analysed, before[1] + unresolved)
        return cls(sum(part.analysed for part in parts),
                   tuple(sorted(entry for part in parts for entry in part.unresolved)),
                   tuple((name, *by_framework[name]) for name in sorted(by_framework)))


@dataclass
class _Candidate:
    call: cst.Call
    name: str  # the called name's last component, e.g. "broadcast"
    scope: cst.CSTNode
    statement: cst.CSTNode
    main_process_first: Optional[cst.With]
    rank_decorator: Optional[cst.Decorator]
    statements: tuple[cst.CSTNode, ...]  # every statement around the call, outermost first
    klass: Optional[str] = None  # the class whose method holds the call


class _CandidateCollector(Visitor):
    """One cheap pass without metadata: calls named like a collective, with their context."""

    def __init__(self, module: cst.Module, package: Optional[str] = None,
                 project_calls: bool = False, imported_staggered: frozenset[str] = frozenset(),
                 imported_gating: frozenset[str] = frozenset(), class_properties: frozenset[str] = frozenset()) -> None:
        self.candidates: list[_Candidate] = []
        # Calls that may be of the project's own functions (only with a FileContext).
        self.project_calls: Optional[list[_Candidate]] = [] if project_calls else None
        self._package = package
        self._classes: list[Optional[str]] = [None]
        self.imported_names: set[str] = set()
        self.assignments: list[tuple[cst.CSTNode, str, cst.BaseExpression]] = []  # scope, name, value
        self.entered: list[tuple[cst.CSTNode, str, cst.Call]] = []  # scope, `as` name, `with X(...)`'s call
        self.first_items: list[tuple[cst.CSTNode, str, cst.BaseExpression]] = []  # `a, b = value`: a
        self.object_calls: list[_Candidate] = []  # `ddp(x)`, `self.model(x)`: named by what they call
        self.self_assignments: list[tuple[cst.CSTNode, str, cst.BaseExpression]] = []  # method, `self.x`, value
        self.attribute_assignments: list[tuple[str, cst.BaseExpression]] = []  # `obj.x = value`: x, value
        self.object_assignments: list[tuple] = []  # `callback.trainer = trainer`: scope, obj, x, value
        self.type_tests: list[tuple] = []  # `isinstance(value, DTensor)`: scope, name, class
        self.wrapped_modules: list[tuple] = []  # `FSDP.state_dict_type(model, ...)`: scope, name, class
        # `metrics[k] = v`, `self.metrics.setdefault(k, v)`, `items.append(v)`: container -> (scope, v)
        self.filled: dict[str, list[tuple[cst.CSTNode, cst.BaseExpression]]] = {}
        self.loops: list = []  # every `for` and comprehension loop (cst.For, cst.CompFor)
        self.local_predicates: list[tuple[str, cst.BaseExpression]] = []  # nested `def f(): return value`
        self._scopes: list[cst.CSTNode] = [module]
        self._statements: list[cst.CSTNode] = []
        self._main_first: list[Optional[cst.With]] = [None]
        self._decorators: list[Optional[cst.Decorator]] = [None]
        self.call_words = set(apis.CALL_WORDS)
        self.api_names: set[str] = set()  # names bound by imports of torch/accelerate/deepspeed
        self.imports: list[tuple[cst.CSTNode, str, str]] = []  # scope, bound name, target
        self.method_classes: dict[cst.FunctionDef, cst.ClassDef] = {}  # method -> its class
        self.staggered = _staggered_context_managers(module) | imported_staggered
        self.taking_turns = _taking_turns(module)
        self.rank_decorators = apis.ONE_RANK_DECORATORS | _rank_gating_decorators(module) | imported_gating
        # Reads of an attribute named like a property that may run a collective (`trainer.log_dir`,
        # a property of the module's own classes): a read runs the property's body.
        self.property_words = _own_properties(module) | class_properties | apis.MAPPED_PROPERTY_NAMES \
            | frozenset(apis.CONTROL_FLAGS) | METRICS_DICTIONARIES | frozenset(apis.LIGHTNING_FLAGS)
        self.property_reads: list[_Candidate] = []
        self._not_reads: set[int] = set()  # called (`x.f()`) or assigned (`x.f = v`) attributes

    # The innermost statement around a call is where the data flow observes the call.
    def _enter_statement(self, node: cst.CSTNode) -> None:
        self._statements.append(node)

    def _leave_statement(self, original_node: cst.CSTNode) -> None:
        self._statements.pop()

    visit_SimpleStatementLine = visit_SimpleStatementSuite = visit_If = visit_While = \
        visit_Try = visit_TryStar = visit_Match = _enter_statement

    def visit_For(self, node: cst.For) -> None:
        self._enter_statement(node)
        self.loops.append(node)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self.loops.append(node)

    leave_SimpleStatementLine = leave_SimpleStatementSuite = leave_If = leave_For = leave_While = \
        leave_Try = leave_TryStar = leave_Match = _leave_statement

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if isinstance(self._scopes[-1], cst.ClassDef):
            self.method_classes[node] = self._scopes[-1]
        elif isinstance(self._scopes[-1], cst.FunctionDef) and not node.params.params:
            returned = single_return(node)  # `def on_main(): return accelerator.process_index == 0`
            if returned is not None:
                self.local_predicates.append((node.name.value, returned))
        self._statements.append(node)
        self._scopes.append(node)
        self._main_first.append(None)  # the body runs when called, not inside the `with`
        decorator = next((d for d in node.decorators if last_name(d.decorator) in self.rank_decorators), None)
        self._decorators.append(decorator)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._statements.pop()
        self._scopes.pop()
        self._main_first.pop()
        self._decorators.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._statements.append(node)
        self._scopes.append(node)
        self._classes.append(node.name.value if len(self._classes) == 1 else "")

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._statements.pop()
        self._scopes.pop()
        self._classes.pop()

    def visit_With(self, node: cst.With) -> None:
        self._statements.append(node)
        self.entered += [(self._scopes[-1], item.asname.name.value, item.item) for item in node.items
                         if isinstance(item.item, cst.Call) and item.asname is not None
                         and isinstance(item.asname.name, cst.Name)]
        entered = any(isinstance(item.item, cst.Call) and (
            last_name(item.item.func) in _MAIN_FIRST_METHODS
            or (isinstance(item.item.func, cst.Name) and item.item.func.value in self.staggered))
            for item in node.items)
        self._main_first.append(node if entered else self._main_first[-1])

    def leave_With(self, original_node: cst.With) -> None:
        self._statements.pop()
        self._main_first.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        self._not_reads.update(id(target.target) for target in node.targets)
        for target in node.targets:
            for bound, value in _pairs(target.target, node.value):
                self._note_assignment(bound, value)

    def _note_assignment(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Attribute):
            self.attribute_assignments.append((target.attr.value, value))
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            self.self_assignments.append((self._scopes[-1], target.attr.value, value))
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            self.object_assignments.append((self._scopes[-1], target.value.value, target.attr.value, value))
        elif isinstance(target, cst.Name):
            self.assignments.append((self._scopes[-1], target.value, value))
        elif isinstance(target, cst.Subscript) and _container_key(target.value) is not None:
            self.filled.setdefault(_container_key(target.value), []).append((self._scopes[-1], value))
        elif isinstance(target, (cst.Tuple, cst.List)) and target.elements \
                and isinstance(target.elements[0].value, cst.Name):
            # `model, optimizer, _, _ = deepspeed.initialize(...)`: what the first name holds.
            self.first_items.append((self._scopes[-1], target.elements[0].value.value, value))

    def visit_Import(self, node: cst.Import) -> None:
        self._note_imports(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._note_imports(node)

    def _note_imports(self, node) -> None:
        for bound, target in import_bindings(node, self._package):
            self.imports.append((self._scopes[-1], bound, target))
            for module, words in apis.GATED_CALL_WORDS.items():
                if target.startswith(module):
                    self.call_words |= words
            self.imported_names.add(bound)
            if target.split(".")[0] in apis.API_PACKAGES:
                self.api_names.add(bound)
                # `from accelerate.utils import broadcast as bc`: `bc(...)` is a candidate too.
                if target.rsplit(".", 1)[-1] in apis.CALL_WORDS:
                    self.call_words.add(bound)

    def resolvable_candidates(self, local_functions=frozenset()) -> list[_Candidate]:
        """Candidates that can be a known API: called through a name imported from one of the
        API packages, or an accelerator or framework method; with a project, also through any
        imported name, `self`, or a function of the module. Only these are worth resolving."""
        def resolvable(candidate: _Candidate) -> bool:
            root = root_name(candidate.call.func)
            if root in self.api_names:
                return True
            if isinstance(candidate.call.func, cst.Attribute) and (
                    candidate.name in apis.ACCELERATOR_METHODS or candidate.name in apis.FRAMEWORK_METHODS
                    or candidate.name in apis.MAPPED_METHOD_NAMES):
                return True
            func = candidate.call.func
            return self.project_calls is not None and (
                root in self.imported_names or root == "self" or root in local_functions
                or root in constructed or root in partials or (isinstance(func, cst.Attribute) and _constructs(func.value))
                or (candidate.name in own_methods and iterated_item(candidate) is not None)
                or (isinstance(func, cst.Name) and bool(own_methods & {"forward", "__call__"}))
                or candidate.name in hooks.REGISTRATIONS or candidate.name in hooks.DEFERRALS
                or calls_super(func) or candidate.name in _DUNDERS
                or apis.STATE_DICT_HOOKS.get(candidate.name) in own_methods
                or (candidate.name == "backward" and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)))

        own_methods = {name.rsplit(".", 1)[1] for name in local_functions if "." in name}

        # `tracker = MetricsTracker(...)`: `tracker.reduce()` may be a project class's method.
        constructed = {name for _, name, value in (*self.assignments, *self.entered) if _constructs(value)}
        # `reduce = functools.partial(dist.all_reduce, ...)`: `reduce(x)` calls what it wraps.
        partials = {name for _, name, value in self.assignments if _calls_one_of(value, ("partial",))}

        found = [c for c in (*self.candidates, *(self.project_calls or ())) if resolvable(c)]
        seen = {id(c) for c in found}
        return found + [c for c in self._wrapper_calls() if id(c) not in seen]

    def _wrapper_calls(self) -> list[_Candidate]:
        """Calls of an object made by a call named like a collective (`ddp = DDP(model)`, `ddp(x)`,
        `self.model = DDP(model)`, `self.model(x)`)."""
        made = {(False, name) for _, name, value in self.assignments if _calls_one_of(value, self.call_words)}
        made |= {(True, name) for _, name, value in self.self_assignments if _calls_one_of(value, self.call_words)}
        return [c for c in self.object_calls if (isinstance(c.call.func, cst.Attribute), c.name) in made]

    def visit_Attribute(self, node: cst.Attribute) -> None:
        name = node.attr.value
        # A TrainerControl flag counts where it is set (ModuleAnalysis._control_flag).
        if name in self.property_words and self._statements and (
                id(node) not in self._not_reads or name in apis.CONTROL_FLAGS or name in apis.LIGHTNING_FLAGS):
            self.property_reads.append(self._candidate(node, name))

    def visit_Return(self, node: cst.Return) -> None:
        scope = self._scopes[-1]
        if isinstance(scope, cst.FunctionDef) and scope.name.value == "prediction_step" and _holds_none(node.value):
            self.property_reads.append(self._candidate(node, "prediction_step"))  # ModuleAnalysis._skipped_gathers

    def visit_Call(self, node: cst.Call) -> None:
        self._not_reads.add(id(node.func))
        put = _put_into(node)
        if put is not None:
            container, item = put
            self.filled.setdefault(container, []).append((self._scopes[-1], item))
        if not self._statements or self._scopes[-1] in self.taking_turns:
            return  # a context manager whose collectives meet: modelled where it is entered
        name = last_name(node.func)
        if name in apis.SHARDING_WORDS and node.args and isinstance(node.args[0].value, cst.Name) \
                and is_bare_call(self._statements[-1], node):
            # `fully_shard(model)` turns `model` itself into the sharded module it returns.
            self.assignments.append((self._scopes[-1], node.args[0].value.value, node))
        if name in self.call_words:
            self.candidates.append(self._candidate(node, name))
            return
        if name == "isinstance" and len(node.args) == 2 and isinstance(node.args[0].value, cst.Name):
            self.type_tests.append((self._scopes[-1], node.args[0].value.value, node.args[1].value))
        elif name in apis.WRAPPED_MODULE_METHODS and isinstance(node.func, cst.Attribute) and node.args \
                and isinstance(node.args[0].value, cst.Name):
            # `FSDP.state_dict_type(model, ...)`: the class whose method takes `model` says what it is.
            self.wrapped_modules.append((self._scopes[-1], node.args[0].value.value, node.func.value))
        candidate = self._candidate(node, name) if name is not None else None
        if isinstance(node.func, cst.Name) or is_self_attribute(node.func):
            self.object_calls.append(candidate)
        if self.project_calls is not None and candidate is not None:
            self.project_calls.append(candidate)

    def _candidate(self, node: cst.Call, name: str) -> _Candidate:
        klass = self._classes[-1] if isinstance(self._scopes[-1], cst.FunctionDef) else None
        return _Candidate(node, name, self._scopes[-1], self._statements[-1], self._main_first[-1],
                          self._decorators[-1], tuple(self._statements), klass or None)


# What `len(x)` and `iter(x)` call of x's class.
_DUNDERS = {"len": "__len__", "iter": "__iter__"}
_TORCH = frameworks.load().versions["torch"]
_DDP = "torch.nn.parallel.distributed.DistributedDataParallel"
# torch.nn layers that register no buffer: a module made of them alone has nothing for DDP to broadcast.
_BUFFERLESS_LAYERS = frozenset({"Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
                                "ConvTranspose2d", "Embedding", "LayerNorm", "ReLU", "GELU", "SiLU", "Tanh",
                                "Sigmoid", "Softmax", "LeakyReLU", "ELU", "Dropout", "Identity", "Flatten"})
_ACCELERATE = frameworks.load().versions["accelerate"]
_LIGHTNING = frameworks.load().versions["lightning"]
_TRAINERS = ("Trainer", "Seq2SeqTrainer")  # transformers' classes that run the training loop
# What a prediction writer is handed at the epoch's end (apis.SHARE_PARAMETERS).
_UNPADDED_PREDICTIONS = RankKind(f"Lightning deals the prediction loader unpadded (UnrepeatedDistributedSamplerWrapper, "
                                 f"lightning {_LIGHTNING}, trainer/connectors/data_connector.py:241), so the rank's "
                                 "predictions hold its own share of the rows")


def _put_into(call: cst.Call) -> Optional[tuple[str, cst.BaseExpression]]:
    """(container, item) for `c.setdefault(key, item)` and `c.append(item)`."""
    func, args = call.func, call.args
    if not isinstance(func, cst.Attribute) or _container_key(func.value) is None:
        return None
    if (func.attr.value == "setdefault" and len(args) == 2) or (func.attr.value == "append" and len(args) == 1):
        return _container_key(func.value), args[-1].value
    return None


def _loop_items(loops: list) -> dict[str, list[str]]:
    """Loop target -> the containers (`metrics`, `self.metrics`) that `for` loops and
    comprehensions iterate, through `.values()`, `.items()` and `sorted()`/`list()`."""
    found: dict[str, list[str]] = {}
    for loop in loops:
        iterable, target = loop.iter, loop.target
        if isinstance(iterable, cst.Call) and last_name(iterable.func) in ("sorted", "list", "reversed") \
                and isinstance(iterable.func, cst.Name) and iterable.args:
            iterable = iterable.args[0].value
        view = last_name(iterable.func) if isinstance(iterable, cst.Call) else None
        if view in ("values", "items") and isinstance(iterable.func, cst.Attribute):
            iterable = iterable.func.value
        if view == "items" and isinstance(target, cst.Tuple) and len(target.elements) == 2:
            target = target.elements[1].value
        container = _container_key(iterable)
        if container is not None and isinstance(target, cst.Name):
            found.setdefault(target.value, []).append(container)
    return found


def _container_key(expr: cst.BaseExpression) -> Optional[str]:
    """`metrics` or `self.metrics`: a container a module's code can fill and iterate."""
    if isinstance(expr, cst.Name):
        return expr.value
    return f"self.{expr.attr.value}" if is_self_attribute(expr) else None


# Context managers under which DDP shadows its own collectives for ranks that ran out of batches:
# `ddp.join()` and `Join([ddp, ...])` (torch distributed/algorithms/join.py; DDP's `_DDPJoinHook`
# all-reduces zeros for the gradients and the buffers), Accelerate's `join_uneven_inputs([model])`.
_JOINING = frozenset({"join", "Join", "join_uneven_inputs"})


def _joins_uneven_inputs(statement: cst.With) -> bool:
    return any(isinstance(item.item, cst.Call) and last_name(item.item.func) in _JOINING for item in statement.items)


# What every torchmetrics Metric counts of its own updates (torchmetrics metric.py `_update_count`).
_METRIC_COUNTS = frozenset({"update_count", "_update_count", "update_called", "_update_called"})


# Joinables besides DDP: ZeRO's `step` broadcasts the parameters each rank owns, and its join hook
# (torch distributed/optim/zero_redundancy_optimizer.py `_ZeROJoinHook`) runs that for a rank out of batches.
_JOINABLES = frozenset({"torch.distributed.optim.zero_redundancy_optimizer.ZeroRedundancyOptimizer"})


def _metric_states(analysis: "ModuleAnalysis") -> frozenset[str]:
    """The states the module's metrics register (`self.add_state("hits", ...)`), and the count of
    updates every torchmetrics metric keeps."""
    added = {call.args[0].value.evaluated_value for call in every_call(analysis.module)
             if last_name(call.func) == "add_state" and call.args and isinstance(call.args[0].value, cst.SimpleString)}
    return frozenset(added) | _METRIC_COUNTS if added or "update_count" in analysis.source.text else frozenset()


def _joins(statement: cst.With, joinable: cst.BaseExpression) -> bool:
    """`with Join([model, opt]):` naming `joinable` among the objects it joins."""
    return any(isinstance(item.item, cst.Call) and last_name(item.item.func) == "Join" and item.item.args
               and isinstance(item.item.args[0].value, (cst.List, cst.Tuple))
               and any(node_code(element.value) == node_code(joinable) for element in item.item.args[0].value.elements)
               for item in statement.items)


def _grad_free(candidate: "_Candidate") -> bool:
    """The call runs with autograd off: in `with torch.no_grad():` (or `inference_mode()`), or in a
    function decorated with one of them."""
    decorators = getattr(candidate.scope, "decorators", ())
    return _under_a_with(candidate, lambda statement: any(_turns_grad_off(item.item) for item in statement.items)) \
        or any(_turns_grad_off(decorator.decorator) for decorator in decorators)


def _turns_grad_off(expr: cst.BaseExpression) -> bool:
    called = expr.func if isinstance(expr, cst.Call) else expr
    return last_name(called) in ("no_grad", "inference_mode")


def _syncs_off(statement: cst.With) -> bool:
    """`with ddp.no_sync():` (gradient accumulation): DDP's backward all-reduces nothing there; nor
    under Accelerate's `with LocalSGD(...)`, which enters the model's no_sync() unless
    `enabled=False` (local_sgd.py:42, accelerate 1.15.0)."""
    return any(isinstance(item.item, cst.Call) and (last_name(item.item.func) == "no_sync" or (
        last_name(item.item.func) == "LocalSGD" and not _passes_name(item.item, "enabled", "False")))
        for item in statement.items)


def _own_property_methods(analysis: "ModuleAnalysis") -> dict[tuple, cst.FunctionDef]:
    """(class, name) -> the getter, for the properties of the module's classes."""
    return {(klass, method.name.value): method for method, klass in analysis._method_classes.items()
            if any(last_name(d.decorator) in ("property", "cached_property") for d in method.decorators)}


def _handed_collators(analysis: "ModuleAnalysis") -> list:
    """What the module hands a loader or a Trainer as `collate_fn=` or `data_collator=`."""
    return [arg.value for call in every_call(analysis.module) for arg in call.args
            if arg.keyword is not None and arg.keyword.value in ("collate_fn", "data_collator")]


def collator_functions(analysis: "ModuleAnalysis") -> frozenset[str]:
    """The module's own functions a loader calls with each batch of samples it collates
    (`DataLoader(ds, collate_fn=drop_corrupt)`): their first parameter holds this rank's samples."""
    functions = {node.name.value for node in analysis.module.body if isinstance(node, cst.FunctionDef)}
    return frozenset(expr.value for expr in analysis.once(_handed_collators)
                     if isinstance(expr, cst.Name) and expr.value in functions)


def _collator_classes(analysis: "ModuleAnalysis") -> frozenset[str]:
    """The classes of the module whose objects a loader calls with each batch it collates: handed as
    `collate_fn=` or `data_collator=` (`Trainer(..., data_collator=collator)`, `collator =
    CountingCollator()`)."""
    classes = analysis._module_classes()
    handed = analysis.once(_handed_collators)
    made = [value for expr in handed for value in ([expr] if isinstance(expr, cst.Call) else
            [v for _, v in analysis._assigned(expr.value)] if isinstance(expr, cst.Name) else [])]
    return frozenset(value.func.value for value in made if isinstance(value, cst.Call)
                     and isinstance(value.func, cst.Name) and value.func.value in classes)


def _holds_none(value: Optional[cst.BaseExpression]) -> bool:
    """`return None, None, None` (or a tuple with a None in it, or None itself)."""
    items = [element.value for element in value.elements] if isinstance(value, cst.Tuple) else [value]
    return any(item is None or (isinstance(item, cst.Name) and item.value == "None") for item in items)


def _sets_true(statement: cst.CSTNode, target: cst.Attribute) -> bool:
    """`statement` is `<target> = True` (chained targets too)."""
    body = statement.body if isinstance(statement, cst.SimpleStatementLine) else ()
    return any(isinstance(small, cst.Assign) and isinstance(small.value, cst.Name) and small.value.value == "True"
               and any(assigned.target is target for assigned in small.targets) for small in body)


def _own_properties(module: cst.Module) -> frozenset[str]:
    """The names of the properties of the module's top-level classes."""
    return frozenset(member.name.value for statement in module.body if isinstance(statement, cst.ClassDef)
                     for member in statement.body.body if isinstance(member, cst.FunctionDef)
                     and any(last_name(d.decorator) in ("property", "cached_property") for d in member.decorators))


def iterated_item(candidate: _Candidate) -> Optional[str]:
    """The receiver's name where the call's receiver is the item of a `for` around it
    (`for cb in callbacks: cb.on_log()`), else None."""
    func = candidate.call.func
    receiver = func.value if isinstance(func, cst.Attribute) else None
    if not isinstance(receiver, cst.Name):
        return None
    loops = [statement for statement in candidate.statements if isinstance(statement, cst.For)]
    return receiver.value if any(receiver.value in _target_names(loop.target) for loop in loops) else None


def _target_names(target: cst.BaseExpression) -> set:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_target_names(element.value) for element in target.elements))
    return set()


def _sets_max_steps(text: str) -> bool:
    """Whether the file hands a Trainer's arguments a step limit (`max_steps=2`; -1 is none), read
    once per file (ModuleAnalysis.per_file)."""
    return _MAX_STEPS.search(text) is not None


_MAX_STEPS = re.compile(r"\bmax_steps\s*=\s*(?!-)\w")


def _keeps_own_samplers(text: str) -> bool:
    """Whether the file tells a Trainer to keep its loaders' samplers (`use_distributed_sampler=False`),
    read once per file (ModuleAnalysis.per_file)."""
    return apis.OWN_SAMPLER.search(text) is not None


def _bound_names(target: cst.BaseExpression) -> set[str]:
    """The names an assignment target binds: `loader`, or each of `model, opt, loader`."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return {name for element in target.elements for name in _bound_names(element.value)}
    return {target.value} if isinstance(target, cst.Name) else set()


def _pairs(target: cst.BaseExpression, value: cst.BaseExpression) -> list:
    """(target, value) pairs of an assignment, unpacking `a, b = x, y` item by item."""
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) \
            and len(target.elements) == len(value.elements) \
            and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
        return [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
    return [(target, value)]


def _calls_one_of(value: cst.BaseExpression, words) -> bool:
    return isinstance(value, cst.Call) and last_name(value.func) in words


def _staggered_context_managers(module: cst.Module) -> frozenset[str]:
    """The module's `@contextlib.contextmanager` functions that, like `main_process_first`, run
    a collective under an `if` before their `yield` (`if rank != 0: dist.barrier()`), and its
    classes whose `__enter__` does so: ranks run the `with` body at different times, one group
    while the other waits in that collective."""
    functions = {function.name.value for function in _context_managers(module)
                 if _conditional_collective(_before_yield(function))}
    classes = {klass.name.value for klass, enter, _ in _context_classes(module) if _conditional_collective(enter.body.body)}
    return frozenset(functions | classes)


def _taking_turns(module: cst.Module) -> frozenset[cst.FunctionDef]:
    """Staggered context managers that close the turn after their `yield` (or in `__exit__`)
    too (ignite's `one_rank_first`: `if current_rank != rank: barrier()`, `yield`, `if
    current_rank == rank: barrier()`): each rank runs one of the two collectives, so they meet."""
    functions = {function for function in _context_managers(module)
                 if _conditional_collective(_before_yield(function))
                 and _conditional_collective(function.body.body[len(_before_yield(function)) + 1:])}
    methods = {method for _, enter, exit_ in _context_classes(module)
               if _conditional_collective(enter.body.body) and _conditional_collective(exit_.body.body)
               for method in (enter, exit_)}
    return frozenset(functions | methods)


def _context_classes(module: cst.Module) -> Iterator[tuple]:
    """(class, its `__enter__`, its `__exit__`) for the module's top-level classes with both."""
    for statement in module.body:
        if isinstance(statement, cst.ClassDef):
            methods = {m.name.value: m for m in statement.body.body if isinstance(m, cst.FunctionDef)}
            if "__enter__" in methods and "__exit__" in methods:
                yield statement, methods["__enter__"], methods["__exit__"]


def _context_managers(module: cst.Module) -> Iterator[cst.FunctionDef]:
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and any(
                last_name(d.decorator) == "contextmanager" for d in statement.decorators):
            yield statement


def _before_yield(function: cst.FunctionDef) -> Sequence[cst.CSTNode]:
    """The statements before the function body's own `yield` (all of them when it has none there)."""
    body = function.body.body
    return next((body[:index] for index, part in enumerate(body) if _yields(part)), body)


def _conditional_collective(statements: Sequence[cst.CSTNode]) -> bool:
    return any(isinstance(part, cst.If) and any(last_name(call.func) in apis.CALL_WORDS for call in calls_in(part))
               for part in statements)


def _rank_gating_decorators(module: cst.Module) -> frozenset[str]:
    """The module's own decorators that, like `rank_zero_only`, call the function they wrap only
    under a rank test: `def main_only(fn): def wrapper(*a): if dist.get_rank() == 0: return fn(*a)`
    `return wrapper`."""
    found = set()
    for statement in module.body:
        if not isinstance(statement, cst.FunctionDef) or not statement.params.params:
            continue
        wrapped = statement.params.params[0].name.value
        wrappers = [part for part in statement.body.body if isinstance(part, cst.FunctionDef)]
        if any(_calls_only_under_rank_test(wrapper, wrapped) for wrapper in wrappers):
            found.add(statement.name.value)
    return frozenset(found)


def _calls_only_under_rank_test(wrapper: cst.FunctionDef, wrapped: str) -> bool:
    """Whether `wrapper` calls `wrapped`, and only inside `if` statements whose test names a rank."""
    calls = [call for call in calls_in(wrapper.body) if isinstance(call.func, cst.Name) and call.func.value == wrapped]
    gated = [call for part in wrapper.body.body
             if isinstance(part, cst.If) and names_rank(node_code(part.test))
             for call in calls_in(part.body) if isinstance(call.func, cst.Name) and call.func.value == wrapped]
    return bool(calls) and len(gated) == len(calls)


class _Substitution(cst.CSTTransformer):
    """Replaces names by expressions (a function's parameters by a call's arguments)."""

    def __init__(self, values: dict) -> None:
        super().__init__()
        self._values = values

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._values.get(original_node.value, updated_node)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        # `x.dtype`: only the object is a parameter, never the attribute's own name
        return updated_node.with_changes(attr=original_node.attr)

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(keyword=original_node.keyword)  # `device=device`: the keyword stays


def _accumulated_attributes(method: cst.FunctionDef) -> frozenset[str]:
    """"self.seen" for each `self.seen += ...` in the method."""
    return frozenset(f"self.{node.target.attr.value}" for node in every_node(method.body, cst.AugAssign)
                     if isinstance(node.target, cst.Attribute) and is_self_attribute(node.target))


def _parameter(name: str, scope: cst.CSTNode) -> Optional[cst.Param]:
    """The parameter `name` of the function `scope`, or None."""
    if not isinstance(scope, cst.FunctionDef):
        return None
    return next((param for param in (*scope.params.posonly_params, *scope.params.params, *scope.params.kwonly_params)
                 if param.name.value == name), None)


def _swallowing_decorators(module: cst.Module) -> frozenset[str]:
    """The module's own decorators whose wrapper turns an exception into a return (`except
    RuntimeError: return None`, the skip-the-batch-on-OOM idiom): the wrapped function returns
    None on the rank whose work failed, and a value on the others."""
    return frozenset(statement.name.value for statement in module.body if isinstance(statement, cst.FunctionDef)
                     and any(_returns_in_handler(part) for part in statement.body.body if isinstance(part, cst.FunctionDef)))


def _returns_in_handler(wrapper: cst.FunctionDef) -> bool:
    return any(isinstance(part, cst.Try) and any(
        isinstance(small, cst.Return) and (small.value is None or is_none(small.value))
        for handler in part.handlers for line in handler.body.body if isinstance(line, cst.SimpleStatementLine)
        for small in line.body) for part in wrapper.body.body)


def _imported_swallowing(module: cst.Module, context: FileContext) -> frozenset[str]:
    """The names a module imports of another project module's swallowing decorators."""
    return _imported_of_kind(module, context, lambda text: "except" in text, _swallowing_decorators)


def _imported_of_kind(module: cst.Module, context: FileContext, worth: Callable[[str], bool],
                      found_in: Callable[[cst.Module], frozenset]) -> frozenset[str]:
    """The names a module imports of another project module's functions that `found_in` finds
    in their own text (parsed only where `worth` says the text may hold one)."""
    found = set()
    for name, target in _imported_project_functions(module, context):
        text = _function_text(context.project, target)
        if worth(text) and target.qualname in found_in(cst.parse_module(textwrap.dedent(text))):
            found.add(name)
    return frozenset(found)


def _imported_project_functions(module: cst.Module, context: FileContext) -> Iterator[tuple]:
    """(bound name, FunctionRef) of each `from package.module import name` of a project function."""
    project, index = context.project, context.index
    if index is None:
        return
    lines = [statement for statement in module.body if isinstance(statement, cst.SimpleStatementLine)]
    for small in (small for line in lines for small in line.body):
        if not isinstance(small, cst.ImportFrom) or small.relative or small.module is None \
                or isinstance(small.names, cst.ImportStar):
            continue
        base = ".".join(dotted_parts(small.module) or ())
        for alias in small.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else None
            target = project.resolve(f"{base}.{name}", index.location.root) if name else None
            if isinstance(target, FunctionRef):
                yield (alias.asname.name.value if alias.asname else name), target


def _function_text(project: Project, target: FunctionRef) -> str:
    index, function = project.index(target.path), project.function_index(target)
    return index.text(function) if index is not None and function is not None else ""


def _line_naming(words: str, target: FunctionRef, project: Project) -> str:
    """`mod_outputs.py:9`: the first line of the project function `target` holding `words`."""
    index, function = project.index(target.path), project.function_index(target)
    lines = range(function.first_line, function.last_line + 1) if index is not None and function is not None else ()
    number = next((number for number in lines if words in index.lines[number - 1]), lines[0] if lines else 1)
    return f"{os.path.basename(target.path)}:{number}"


def _imported_gating(module: cst.Module, context: FileContext) -> frozenset[str]:
    """The names a module imports of another project module's rank-gating decorators (see
    _rank_gating_decorators): `from utils import main_only`."""
    return _imported_of_kind(module, context, lambda text: "def " in text[4:], _rank_gating_decorators)


def _imported_staggered(module: cst.Module, context: FileContext) -> frozenset[str]:
    """The names a module imports (`from utils import torch_distributed_zero_first`) of another
    project module's staggered context managers (see _staggered_context_managers)."""
    return _imported_of_kind(module, context, lambda text: "contextmanager" in text, _staggered_context_managers)


def _yields(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.Expr) and isinstance(small.value, cst.Yield) for small in statement.body)


def _unresolved(candidates: list[_Candidate], classified, known) -> list[tuple[str, int, cst.Call]]:
    """(name, its ordinal among the calls of that name, call) for calls named like a collective
    that are neither analysed nor known to be something else."""
    seen: dict[str, int] = {}
    found = []
    for candidate in candidates:
        ordinal = seen.get(candidate.name, 0)
        seen[candidate.name] = ordinal + 1
        if candidate.call not in classified and not known(candidate):
            found.append((candidate.name, ordinal, candidate.call))
    return found


def _indexing_gather(call: cst.Call) -> bool:
    """`x.gather(-1, index)`, `x.gather(dim=1, ...)`: torch's indexing, whose first argument is a
    dimension (a collective's is what it gathers); the pre-filter skips files for these alone."""
    if last_name(call.func) != "gather" or not call.args:
        return False
    first = call.args[0]
    if first.keyword is not None:
        return first.keyword.value == "dim"
    value = first.value
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    return isinstance(value, cst.Integer)


def _call_lines(tree: ast.Module, names: set[str], kept_lines: Optional[Sequence[int]],
                source_lines: Optional[list[str]] = None) -> dict[str, list[int]]:
    """The lines of the calls of each name, in the order LibCST visits them (outer calls first).
    Only the kept statements whose text names one of them are walked."""
    kept = set(kept_lines) if kept_lines is not None else None
    words = list(names)
    calls = []
    for statement in _statements_with(tree, kept):
        if source_lines is not None:
            text = "".join(source_lines[statement.lineno - 1:statement.end_lineno])
            if not any(word in text for word in words):
                continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                name = called_name(node)
                if name in names and (kept is None or node.lineno in kept):
                    calls.append((node.lineno, node.col_offset, -node.end_lineno, -node.end_col_offset, name))
    lines: dict[str, list[int]] = {name: [] for name in names}
    for line, *_, name in sorted(calls):
        lines[name].append(line)
    return lines


def _statements_with(tree: ast.Module, kept: Optional[set[int]]) -> Iterator[ast.AST]:
    """Top-level statements and class members the engine did not cut (see reduce.py): the cut
    ones hold no call named like a collective."""
    for statement in tree.body:
        members = statement.body if isinstance(statement, ast.ClassDef) else [statement]
        for member in members:
            first, last = member.lineno, member.end_lineno
            if kept is None or first == last or any(line in kept for line in range(first + 1, last + 1)):
                yield member


def _called_text(call: cst.Call, name: str) -> str:
    """`comm.all_reduce`; `(...).scatter` when the receiver is no dotted name."""
    parts = dotted_parts(call.func)
    return ".".join(parts) if parts else f"(...).{name}"


def _called_on(api: apis.Api, receiver: cst.BaseExpression) -> apis.Api:
    """A framework method's Api, naming the object it was called on (`trainer`, `self.fabric`) when
    that is a dotted name."""
    parts = dotted_parts(receiver)
    return replace(api, receiver=".".join(parts)) if parts else api


def _framework_named(name: str, imported: set[str]) -> str:
    """The framework an unresolved call `name` may belong to: one the module imports that has a
    method or function of that name (`self.strategy.barrier()` in a Lightning module), else torch
    for a collective's name where the module imports torch, else frameworks.OTHER."""
    for framework in sorted(imported - {"torch", frameworks.OTHER}):
        if name in apis.NAMES_BY_FRAMEWORK.get(framework, ()):
            return framework
    return "torch" if "torch" in imported and name in apis.NAMED_LIKE_A_COLLECTIVE else frameworks.OTHER


def _mapped_entry(target) -> Optional[frameworks.Entry]:
    """The framework map's entry for a project function (a FunctionRef), when the project is a
    mapped framework."""
    framework_map = frameworks.load()
    return framework_map.entries.get(framework_map.canonical(target.qualified_name))


_LOGGING_METHODS = frozenset({"lightning.pytorch.core.module.LightningModule.log",
                              "lightning.pytorch.core.module.LightningModule.log_dict"})


def _logged_keys(call: cst.Call) -> Iterator[str]:
    """The literal keys `self.log("key", v)` or `self.log_dict({"key": v})` logs."""
    logged = argument_value(call, 0, "name") if last_name(call.func) == "log" else argument_value(call, 0, "dictionary")
    if isinstance(logged, cst.SimpleString):
        yield logged.evaluated_value
    elif isinstance(logged, cst.Dict):
        yield from (element.key.evaluated_value for element in logged.elements
                    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString))


def _calls_assigned(text: str) -> dict[str, list[cst.BaseExpression]]:
    """name -> each call the file assigns to that name (`metrics = MetricCollection(...)`), found
    with CPython's `ast` and parsed once; only where the file names a switch (apis.SWITCHED_OFF_IN_ITEMS)."""
    if not any(keyword in text for keyword in apis.SWITCHED_OFF_IN_ITEMS.values()):
        return {}
    tree = parsed(text)
    if tree is None:
        return {}
    found: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            for target in (t for t in node.targets if isinstance(t, ast.Name)):
                found.setdefault(target.id, []).append(cst.parse_expression(ast.unparse(node.value)))
    return found


def _passes(call: cst.Call, keyword: str) -> bool:
    return any(arg.keyword is not None and arg.keyword.value == keyword for arg in call.args)


def _passes_name(call: cst.BaseExpression, keyword: str, value: str) -> bool:
    """`call` passes `keyword=<value>` for a name `value` ("False", "True")."""
    return isinstance(call, cst.Call) and any(
        arg.keyword is not None and arg.keyword.value == keyword and isinstance(arg.value, cst.Name)
        and arg.value.value == value for arg in call.args)


def _under_a_with(candidate: "_Candidate", manages: Callable[[cst.With], bool]) -> bool:
    """The call sits in a `with` statement that `manages` picks (`with ddp.no_sync():`)."""
    return any(isinstance(statement, cst.With) and manages(statement) for statement in candidate.statements)


_COMPUTING: dict = {}  # a module's own pass under way (ModuleAnalysis._globals_read)


def _entry_of(api: apis.Api) -> Optional[frameworks.Entry]:
    framework_map = frameworks.load()
    return framework_map.entries.get(api.qualified_name) or framework_map.entries.get(
        framework_map.canonical(api.qualified_name))


def _condition_holds(api: apis.Api, call: cst.Call, assigned: Callable[[str], list]) -> bool:
    """A mapped call that runs its collective only under an argument (`log(..., sync_dist=True)`,
    `get_model_state_dict(..., options=StateDictOptions(full_state_dict=True))`, or `options=options`
    for a name the module assigns so: `assigned(name)` gives its values) passes it, true."""
    entry = _entry_of(api)
    if entry is None or entry.when is None:
        return True
    return any(node.keyword is not None and node.keyword.value == entry.when
               and not (isinstance(node.value, cst.Name) and node.value.value in ("False", "None"))
               for node in _arguments(call, assigned))


def _arguments(call: cst.Call, assigned: Callable[[str], list]) -> Iterator[cst.Arg]:
    """The call's arguments and those of the calls among them or assigned to a name among them
    (`options=StateDictOptions(...)`, `options=options`)."""
    for arg in call.args:
        yield arg
        made = [arg.value] if isinstance(arg.value, cst.Call) else \
            assigned(arg.value.value) if isinstance(arg.value, cst.Name) and arg.keyword is not None else []
        for value in made:
            if isinstance(value, cst.Call):
                yield from _arguments(value, lambda name: [])


def _locally_synchronised(api: apis.Api, call: cst.Call) -> bool:
    """`new_group(ranks, use_local_synchronization=True)` is entered by the group's members only."""
    return api.short_name == "new_group" and any(
        arg.keyword is not None and arg.keyword.value == "use_local_synchronization"
        and not (isinstance(arg.value, cst.Name) and arg.value.value == "False") for arg in call.args)


class ModuleAnalysis:
    def __init__(self, module: cst.Module, filename: str, source: Optional[Source] = None,
                 context: Optional[FileContext] = None):
        """`source`: the file `module` was parsed from, which maps the lines of the text LibCST
        parsed back to the file's when the engine cut irrelevant code out (see reduce.py);
        positions are reported in the file's lines. By default, `module`'s own code.
        `context`: the project around the module, to follow calls of its own functions."""
        self.module = module
        self.filename = filename
        self.source = source or Source.from_text(module.code)
        self.calls: list[CallSite] = []
        self.worlds: dict[cst.CSTNode, tuple[World, ...]] = {}
        self.exits: dict[cst.CSTNode, ScopeExits] = {}  # scope -> its exits, for scopes with calls
        self.divergence = Divergence()  # what differs between ranks in the scopes with calls
        self._positions = StatementPositions(module)
        self._context = context
        self._targets: dict[cst.Call, object] = {}  # project call -> what it reaches
        # The divergence passes this analysis keeps call back into it: weakly, or the tree stays
        # alive until the next full collection (engine.rare_garbage_collection).
        self._names_of = _weak(self.qualified_names)
        self.conditions = RankConditions(self._names_of,
                                         _weak(self._helper_truth) if context is not None else None,
                                         _weak(self._certainly_none) if context is not None else None,
                                         _weak(self._typed_rank_test))
        collector = _CandidateCollector(module, context.package if context else None, context is not None,
                                        _imported_staggered(module, context) if context else frozenset(),
                                        _imported_gating(module, context) if context else frozenset(),
                                        context.class_properties() if context else frozenset())
        collector.walk(module)
        self.bindings = Bindings()  # memo keyed by this tree's nodes: lives as long as the analysis
        self._resolver = ImportResolver(module, collector.imports, self.bindings)
        self._resolver_imports = collector.imports
        self._assignments = collector.assignments
        self._entered = collector.entered
        self._first_items = collector.first_items
        self._self_assignments = collector.self_assignments
        self._object_assignments = collector.object_assignments
        self._type_tests = collector.type_tests
        self._wrapped_modules = collector.wrapped_modules
        self._filled = collector.filled
        self._loops = collector.loops
        self._method_classes = collector.method_classes
        self._training_arguments = TrainingArgumentsTests(
            module, self._names_of, self._method_classes.get, _weak(self._mapped_base), _weak(self._assigned))
        self._ancestors: dict[cst.Call, tuple[cst.CSTNode, ...]] = {}
        self._once: dict[Callable, object] = {}
        self._swallowed_functions: Optional[dict[str, str]] = None  # see _swallowed
        self._caller_passes: dict[cst.CSTNode, Divergence] = {}  # see _caller_divergence
        self._handed_passes: dict[cst.CSTNode, Divergence] = {}  # see handed_divergence
        self._helper_calls: Optional[dict] = None  # see helper_collective_calls
        self._module_end: Optional[dict] = None  # see _globals_read
        self._parameters_found: dict[tuple, Parameters] = {}  # see _varying_parameters
        self._given_found: dict[cst.FunctionDef, frozenset[str]] = {}  # see _given_parameters
        self._parsed_functions: dict[FunctionRef, Optional[cst.FunctionDef]] = {}  # see _parsed_function
        self._method_returns: dict[cst.FunctionDef, tuple] = {}  # see _own_method_returns
        self._unsettled_returns: dict[tuple, tuple] = {}  # see _method_returned
        self._method_returns_running: set[cst.FunctionDef] = set()
        self._returns_cut_short = 0  # how often a method's return was asked for while it was computed
        self._provisional: list = []  # (cache, key) of answers stored while one was cut short: see _keep
        self._cut_short_methods: set[cst.FunctionDef] = set()  # whose return was taken as alike so
        self._cut_short_wrong = False  # one of them returns what differs between ranks after all
        self._forgotten_for: set[cst.FunctionDef] = set()  # methods answers were forgotten for, once each
        self._methods_by_name: Optional[dict[str, cst.FunctionDef]] = None  # see _own_methods
        self._functions_by_name: Optional[dict[str, cst.FunctionDef]] = None  # see _own_functions
        self._constructions_found: Optional[list[_Construction]] = None  # see _construction_sites
        self._dispatched: dict[cst.Call, bool] = {}  # see _dispatched_method
        self._unwrapping: set[cst.Call] = set()  # the partials _partial_api is following
        self._running_here: set[FunctionRef] = set()  # the methods _runs_one_here is reading
        self._handing: set[cst.CSTNode] = set()  # the scopes whose parameters _called_module follows
        self._handing_makers: set[cst.CSTNode] = set()  # the functions _handed_makers is reading the calls of
        self._loop_items: Optional[dict[str, list[str]]] = None  # loop target -> containers iterated
        self._candidates_by_scope: Optional[dict] = None  # see _runs_one_here
        self._module_calls: set[cst.Call] = set()  # see _called_module
        self._framework_forwards: set[cst.Call] = set()  # see _forward_of
        self._calls_by_name: Optional[dict[Optional[str], list]] = None  # see _constructions
        self._project_calls_by_name: Optional[dict[Optional[str], list]] = None  # see _project_calls_named
        self._assignments_by_name: Optional[dict[str, list]] = None  # see _assigned
        self._entered_by_name: Optional[dict[str, list]] = None  # see _entered_as
        self._classes_by_name: Optional[dict[str, cst.ClassDef]] = None  # see _module_classes
        self._instances: Optional[frozenset[str]] = None  # see _instance_names
        self._calls_by: Optional[tuple[list, dict, dict]] = None  # (calls, by scope, by statement)
        local_functions = frozenset(context.index.functions) if context and context.index else frozenset()
        candidates = collector.resolvable_candidates(local_functions)
        self._statements_around = {c.call: c.statements for c in candidates}
        self._positions.hint(candidates)
        self._project_calls = {c.call: c for c in candidates}
        classified = {c.call: site for c, site in zip(candidates, map(self._classify, candidates)) if site}
        self.calls = list(classified.values())
        self.calls += self._hook_registrations([c for c in candidates if c.name in hooks.REGISTRATIONS
                                                or c.name in hooks.DEFERRALS])
        self._statements_around.update({c.call: c.statements for c in collector.property_reads})
        self._positions.hint(collector.property_reads)
        self.calls += [site for site in map(self._property_read, collector.property_reads) if site is not None]
        self.attributes = ClassAttributes(self._method_classes, _weak(self._attribute_pass), _weak(self._rank_test),
                                          _weak(self.module_bases))
        self._unresolved = _unresolved([c for c in collector.candidates if c.name not in apis.FRAMEWORK_ONLY_WORDS],
                                       classified, self._known)
        # Read where no collective is too (a helper's return: `tracking_enabled()`).
        self.conditions.environment_where = _weak(self.environment_where)
        # What the module's literal tables hold: read where no collective is too (a helper's summary
        # returning `ROWS[rank::world]`).
        self.conditions.constants = _module_constants(module, collector.assignments)
        self.conditions.tables = _literal_tables(module, collector.assignments)
        self.conditions.table_lengths = _table_lengths(module, collector.assignments)
        self.conditions.uniform_tables = _uniform_tables(module, collector.assignments)
        self.conditions.uneven_item_tables = _uneven_item_tables(module, collector.assignments)
        # (read only where the module has a table or a collective)
        if self.conditions.table_lengths or self.calls:
            copies, local_tables = self._table_copies()
            self.conditions.table_copies = copies
            self.conditions.table_lengths = {**local_tables, **self.conditions.table_lengths}
        # What the module's helpers can raise, and catch: read where no collective is too (a
        # generator's summary, skipping what its helper fails on)
        self.conditions.absorbed = self.per_module(absorbed_exceptions)
        self.conditions.raising_functions = self.per_module(raising_functions)
        self.conditions.swallowing = self.per_module(swallowing_managers)
        self.conditions.seeded_parameters = self.per_module(seeded_parameters)
        self.conditions.gradients_apart = self.per_module(gradients_kept_apart)
        self.conditions.failing_of = _weak(self._failing_of)
        if not self.calls:
            return
        for _ in range(2):  # `rank = get_rank(); r = rank` needs a second look
            for _, name, value in collector.assignments:
                self.conditions.learn_assignment(name, value)
        self.conditions.other_ranks = other_rank_names(module, self.conditions)
        whole = self.whole_text()
        self.conditions.seeded_per_rank = self.per_file(seeds_per_rank)
        self.conditions.unseeded = self.per_file(unseeded_generators)
        self.conditions.signalled = self.per_file(signalled)
        self.conditions.files_written = self.per_file(files_written_on_some_ranks)
        self.conditions.routed_forward = self.per_file(routed_forward)
        self.conditions.unsynced_metrics = self.per_file(unsynced_metrics)
        self.conditions.training_off = self.per_file(switched_off_per_rank)
        self.conditions.lightning_loggers = "lightning" in whole and ".experiment" in whole
        self.conditions.trackers_on_some_ranks = self._trackers_on_some_ranks(whole)
        self.conditions.uneven_accelerators = self.per_file(uneven_accelerators)
        self.conditions.attributes = _attribute_definitions(module, collector.attribute_assignments)
        self.conditions.local_functions = _agreed(collector.local_predicates)
        self.conditions.logging_per_rank = self._logging_per_rank(whole)
        self.conditions.data_attributes = self._data_attributes()
        self.conditions.counters = frozenset("self." + name for _, name, value in collector.self_assignments
                                             if makes_counter(value))
        if self.once(_own_property_methods):
            self.conditions.property_value = _weak(self._property_why)
        if self._instance_names():
            self.conditions.instance_value = _weak(self._instance_why)
        if "torchmetrics" in whole and self.once(_metric_states):
            self.conditions.metric_state = _weak(self._metric_state_why)
        self._run_data_flow()

    # -- resolution ------------------------------------------------------------------------
    def qualified_names(self, node: cst.CSTNode, scope: Optional[cst.CSTNode] = None) -> set[str]:
        """Fully qualified names of a call's target (or of a name/attribute), as seen from
        `scope` (default: module level)."""
        return self._resolver.qualified_names(node, scope)

    def _classify(self, candidate: _Candidate) -> Optional[CallSite]:
        qualified = self.qualified_names(candidate.call, candidate.scope)
        api = next((apis.CATALOG[q] for q in qualified if q in apis.CATALOG), None)
        if api is None and self._is_accelerator_method(candidate):
            api = apis.ACCELERATOR_METHODS[candidate.name]
        if api is None and self._context is not None:
            api = self._project_api(candidate)
        if api is None:
            api = self._framework_method(candidate) or self._forward_of(candidate) or self._wrapped_backward(candidate)
        if api is None and self._context is not None:
            api = self._partial_api(candidate) or self._prepared_iteration(candidate) or self._state_dict_hook(candidate)
        if api is not None and not _condition_holds(api, candidate.call, self.assigned_values):
            api = self._object_condition(api, candidate) or self._monitored_key(api, candidate)
        if api is None or _locally_synchronised(api, candidate.call):
            return None
        if api.qualified_name == "accelerate.accelerator.Accelerator.backward" and _under_a_with(candidate, _syncs_off):
            return None  # `accelerator.backward(loss)` under `with accelerator.no_sync(model):` or LocalSGD
        return CallSite(candidate.call, api, candidate.scope, candidate.statement,
                        candidate.main_process_first, candidate.rank_decorator)

    def _object_condition(self, api: apis.Api, candidate: _Candidate) -> Optional[apis.Api]:
        """A mapped call whose keyword condition fails that still runs a collective because of the
        object it is handed (`self.log("recall", self.recall)` with a torchmetrics Metric): its Api,
        saying what it then runs; None otherwise."""
        entry = _entry_of(api)
        handed = entry.when_object if entry is not None else None
        value = argument_value(candidate.call, handed.position, handed.keyword) if handed is not None else None
        if value is None or self._receiver_class(value, candidate.scope) != handed.klass:
            return None
        return replace(api, inside=f"runs {handed.inside} inside ({entry.framework} {entry.version})")

    def _monitored_key(self, api: apis.Api, candidate: _Candidate) -> Optional[apis.Api]:
        """`self.log("val_auc", auc)` of a key a ModelCheckpoint or EarlyStopping of the module
        monitors (logged_metrics.monitoring_callbacks): every rank looks the key up after
        validation, so a rank that did not log it fails there; its Api, saying so; None otherwise."""
        entry = _entry_of(api)
        if entry is None or entry.name not in _LOGGING_METHODS:
            return None
        monitored = self.per_file(monitoring_callbacks)
        key = next((key for key in _logged_keys(candidate.call) if key in monitored), None)
        if key is None:
            return None
        callback, line = monitored[key]
        return replace(api, inside=f"logs the key '{key}' that {callback} (line {line}) looks up on every rank after "
                                   f"validation, failing where it is missing, before reduce_boolean_decision() "
                                   f"({entry.framework} {entry.version})")

    # -- the project's own functions --------------------------------------------------------
    def _target(self, candidate: _Candidate, worth=None):
        """What a call reaches in the project (see FileContext.target), computed once."""
        key = (candidate.call, worth)
        if key not in self._targets:
            qualified = self.qualified_names(candidate.call, candidate.scope)
            root = root_name(candidate.call.func)
            local = root is not None and self._resolver.binds_locally(root, candidate.scope)
            self._targets[key] = self._context.target(candidate.call.func, qualified, candidate.klass,
                                                      local, worth) or self._constructed_method(candidate) \
                or self._dispatched_method(candidate) or self._called_module(candidate) or self._dunder_method(candidate)
        return self._targets[key]

    def _hook_registrations(self, candidates: list[_Candidate]) -> list[CallSite]:
        """Registrations of a hook of this module that runs a collective (analysis.hooks): the
        ranks that register it run the collective at every pass, the others never."""
        found = []
        for candidate in candidates:
            position, when = 0, hooks.WHEN_HOOKED
            if candidate.name in hooks.DEFERRALS:
                position = hooks.deferred_position(candidate.name, self.qualified_names(candidate.call, candidate.scope))
                if position is None:
                    continue
                when = hooks.DEFERRALS[candidate.name][1]
            hook = hooks.registered_function(self._functions_of, candidate.call, candidate.scope, position)
            inner = next((site for site in self.calls if site.scope is hook), None) if hook is not None else None
            if inner is not None:
                chain = hooks.HookChain(hook.name.value, CallChain(self, inner), when)
                api = apis.Api(candidate.name, apis.OTHER, inside=chain)
                found.append(CallSite(candidate.call, api, candidate.scope, candidate.statement,
                                      candidate.main_process_first, candidate.rank_decorator))
        return found

    def _property_read(self, candidate: _Candidate) -> Optional[CallSite]:
        """`trainer.log_dir` (a mapped property that runs a collective) or `stats.total` (a
        property of the module's own class whose body runs one), read: the read is the call."""
        read = candidate.call
        if isinstance(read, cst.Return):
            api = self._skipped_gathers(read, candidate)
        else:
            api = self._mapped_property(read, candidate.scope) or self._own_property(read, candidate.scope) \
                or self._control_flag(read, candidate) or self._synced_metrics_read(read, candidate.scope) \
                or self._lightning_flag(read, candidate)
        if api is None:
            return None
        return CallSite(read, api, candidate.scope, candidate.statement, candidate.main_process_first,
                        candidate.rank_decorator)

    def _synced_metrics_read(self, read: cst.Attribute, scope: cst.CSTNode) -> Optional[apis.Api]:
        """`trainer.callback_metrics` of a Lightning Trainer in a module that logs a metric for the
        epoch with sync_dist=True (logged_metrics.synced_epoch_metrics), read in a hook of a Callback
        or LightningModule: while the Trainer runs, the read syncs it (after `fit` returns, it keeps
        no results to compute)."""
        if read.attr.value not in METRICS_DICTIONARIES or not self.per_file(synced_epoch_metrics) \
                or not self.derives_from(self._method_classes.get(scope), ("lightning", "pytorch_lightning"),
                                         ("Callback", "LightningModule")):
            return None
        owner = self._receiver_class(read.value, scope)
        if owner is None or not owner.startswith("lightning.") or not owner.endswith(".Trainer"):
            return None
        return apis.Api(read.attr.value, apis.HIDDEN, inside=apis.METRICS_SYNC, receiver=self.code(read.value),
                        read=True)

    def _control_flag(self, flag: cst.Attribute, candidate: _Candidate) -> Optional[apis.Api]:
        """`control.should_training_stop = True` in a hook of a transformers TrainerCallback (the
        hook's `control` parameter), or `self.control.should_save = True` in a method of a Trainer
        subclass (the Trainer's own TrainerControl): the process's Trainer acts on it, the others'
        do not unless they set it too (apis.CONTROL_FLAGS). Setting it is the site."""
        effect = apis.CONTROL_FLAGS.get(flag.attr.value)
        scope = candidate.scope
        if effect is None or not isinstance(scope, cst.FunctionDef) or not _sets_true(candidate.statement, flag):
            return None
        klass = self._method_classes.get(scope)
        hook_parameter = isinstance(flag.value, cst.Name) \
            and flag.value.value in {param.name.value for param in scope.params.params} \
            and self.derives_from(klass, ("transformers",), ("TrainerCallback",))
        own_control = is_self_attribute(flag.value) and flag.value.attr.value == "control" \
            and self.derives_from(klass, ("transformers",), ("Trainer",))
        if not (hook_parameter or own_control):
            return None
        return apis.Api(flag.attr.value, apis.HIDDEN, inside=effect, receiver=self.code(flag.value), read=True,
                        steers="is set")

    def _lightning_flag(self, flag: cst.Attribute, candidate: _Candidate) -> Optional[apis.Api]:
        """`trainer.should_stop = True` on a Lightning Trainer (a Callback hook's `trainer`, a
        LightningModule's `self.trainer`): its loops read it unsynced (apis.LIGHTNING_FLAGS)."""
        effect = apis.LIGHTNING_FLAGS.get(flag.attr.value)
        if effect is None or not _sets_true(candidate.statement, flag):
            return None
        owner = self._receiver_class(flag.value, candidate.scope)
        if owner is None or not owner.startswith("lightning.") or not owner.endswith(".Trainer"):
            return None
        return apis.Api(flag.attr.value, apis.HIDDEN, inside=effect, receiver=self.code(flag.value), read=True,
                        steers="is set")

    def _skipped_gathers(self, returned: cst.Return, candidate: _Candidate) -> Optional[apis.Api]:
        """`return None, None, None` in a `prediction_step` override of a transformers Trainer: the
        evaluation loop gathers only what is not None (apis.SKIPPED_GATHERS)."""
        scope = candidate.scope
        if not (isinstance(returned, cst.Return) and isinstance(scope, cst.FunctionDef)
                and scope.name.value == "prediction_step"
                and self.derives_from(self._method_classes.get(scope), ("transformers",), ("Trainer",))):
            return None
        return apis.Api("None from prediction_step", apis.HIDDEN, inside=apis.SKIPPED_GATHERS, read=True,
                        steers="is returned")

    def _mapped_property(self, read: cst.Attribute, scope: cst.CSTNode) -> Optional[apis.Api]:
        owner = self._receiver_class(read.value, scope)
        entry = frameworks.load().method(owner, read.attr.value) if owner is not None else None
        if entry is None or entry.kind != "property":
            return None
        return replace(_called_on(apis.framework_api(entry), read.value), read=True)

    def _own_property(self, read: cst.Attribute, scope: cst.CSTNode) -> Optional[apis.Api]:
        """`self.total` in a method of the class, or `stats.total` for `stats = Stats(...)`."""
        if self._context is None or self._context.index is None:
            return None
        receiver = read.value
        if isinstance(receiver, cst.Name) and receiver.value == "self":
            klass = self._method_classes.get(scope)
            names = {klass.name.value} if klass is not None else {self._context.klass} - {None}  # (a summary's)
        elif isinstance(receiver, cst.Name):
            names = {value.func.value for where, value in self._assigned(receiver.value)
                     if where in (scope, self.module) and _constructs(value) and isinstance(value.func, cst.Name)}
        else:
            return None
        for name in names:
            ref = self._context.project.method(self._context.index, name, read.attr.value)
            if ref is not None and self._context.summaries.may_run_collective(ref):
                summary = self._context.summaries.of(ref)
                return replace(summary.api, read=True, receiver=self.code(receiver)) \
                    if summary is not None and summary.api else None
        return None

    def _functions_of(self, scope: cst.CSTNode) -> dict[str, cst.FunctionDef]:
        """What a name means as a function in `scope`: the module's functions, those defined in
        `scope`'s own body, and its class's methods as "self.<name>"."""
        found = {s.name.value: s for s in self.module.body if isinstance(s, cst.FunctionDef)}
        if isinstance(scope, cst.FunctionDef):
            found.update({s.name.value: s for s in scope.body.body if isinstance(s, cst.FunctionDef)})
            klass = self._method_classes.get(scope)
            if klass is not None:
                found.update({"self." + s.name.value: s for s in klass.body.body if isinstance(s, cst.FunctionDef)})
        return found

    def _dispatched_method(self, candidate: _Candidate):
        """`cb.on_epoch_end(...)` in `for cb in self.callbacks:`: the method of that name of one of
        the module's classes the code constructs, the first that may run a collective; the items'
        classes are not known, and a callback list mixes them."""
        func = candidate.call.func
        item = iterated_item(candidate)
        if item is None or func.attr.value in _MAIN_FIRST_METHODS or self._context.index is None:
            return None
        sites = self._construction_sites()
        conditional = {site.klass.name.value for site in sites if site.conditional}
        # Those made under a condition first: where the items differ between ranks, they do.
        for klass in sorted({site.klass.name.value for site in sites}, key=lambda name: (name not in conditional, name)):
            ref = self._context.project.method(self._context.index, klass, func.attr.value)
            if ref is not None and self._context.summaries.may_run_collective(ref):
                self._dispatched[candidate.call] = klass in conditional
                return ref
        return None

    def _dispatched_by_name(self, candidate: _Candidate):
        """`self.fire("on_log", logs=...)` where `fire(self, hook, **kwargs)` calls `getattr(cb,
        hook)(...)`: the method named by the string it is handed, of one of the module's classes the
        code constructs, the first that may run a collective (a trainer's callback dispatch)."""
        if not any(isinstance(arg.value, cst.SimpleString) for arg in candidate.call.args) or self._context.index is None:
            return None
        target = self._target(candidate)
        text = _function_text(self._context.project, target) if isinstance(target, FunctionRef) else ""
        function = self._parsed_function(target, text) if "getattr(" in text else None
        if function is None:
            return None
        handed = dict(bound_arguments(function, candidate.call, "." in target.qualname))
        for call in every_call(function):
            looked_up = call.func
            if not (isinstance(looked_up, cst.Call) and last_name(looked_up.func) == "getattr" and len(looked_up.args) >= 2
                    and isinstance(looked_up.args[1].value, cst.Name)):
                continue
            name = handed.get(looked_up.args[1].value.value)
            method = name.evaluated_value if isinstance(name, cst.SimpleString) else None
            for site in self._construction_sites() if isinstance(method, str) else ():
                ref = self._context.project.method(self._context.index, site.klass.name.value, method)
                if ref is not None and self._context.summaries.may_run_collective(ref):
                    return ref
        return None

    def dispatched_alike(self, call: cst.Call) -> bool:
        """`call` dispatches to a method of items whose class is made on every path (never under a
        condition): a varying number of items in the list is of other classes."""
        return self._dispatched.get(call) is False

    def _constructed_method(self, candidate: _Candidate):
        """`tracker.reduce()` where `tracker = MetricsTracker(...)` in the scope (or `self.tracker`
        set so in the class, or handed to its `__init__` so), or `MetricsTracker().reduce()`: the
        project class's method, or None."""
        func = candidate.call.func
        if not isinstance(func, cst.Attribute) or func.attr.value in _MAIN_FIRST_METHODS:
            return None  # the block's rank context, as _framework_method says
        klass = self._receiver_constructor(candidate)
        if klass is None:
            return None
        return self._context.method_of(klass, self.qualified_names(klass, candidate.scope), func.attr.value)

    def _dunder_method(self, candidate: _Candidate):
        """`len(loader)` or `iter(loader)` of an object of a project class (or a DataLoader made
        with one as its `batch_sampler=` or `sampler=`, which it asks in turn): that class's
        `__len__` or `__iter__`, or None."""
        call, dunder = candidate.call, _DUNDERS.get(candidate.name)
        if dunder is None or not isinstance(call.func, cst.Name) or len(call.args) != 1:
            return None
        made = self._makers_of(call.args[0].value, candidate.scope)
        for loader in [m for m in made if isinstance(m, cst.Call) and last_name(m.func) == "DataLoader"]:
            sampler = argument_value(loader, None, "batch_sampler") or argument_value(loader, None, "sampler")
            made += self._makers_of(sampler, candidate.scope) if sampler is not None else []
        classes = {m.func for m in made if _constructs(m) and last_name(m.func) != "DataLoader"}
        if len(classes) != 1:
            return None
        klass = classes.pop()
        return self._context.method_of(klass, self.qualified_names(klass, candidate.scope), dunder)

    def _receiver_constructor(self, candidate: _Candidate) -> Optional[cst.BaseExpression]:
        """The class expression of the construction that made the object a method is called on
        (`MetricsTracker` for `tracker = MetricsTracker(...)`, `self.tracker` set or handed so,
        `MetricsTracker().reduce()`), when one class made it; else None."""
        made = self._makers_of(candidate.call.func.value, candidate.scope)
        classes = {value.func for value in made if _constructs(value)}
        return classes.pop() if len(classes) == 1 else None  # of two classes, or none: not known

    def construction_argument(self, receiver: cst.BaseExpression, keyword: str,
                              scope: cst.CSTNode) -> Optional[cst.BaseExpression]:
        """What the call that made `receiver` passed as `keyword` (`eval_dataset` of `trainer =
        Trainer(..., eval_dataset=rows)`), when one call made it and passed one."""
        calls = [made for made in self._makers_of(receiver, scope) if isinstance(made, cst.Call)]
        values = [arg.value for call in calls for arg in call.args
                  if arg.keyword is not None and arg.keyword.value == keyword]
        return values[0] if len(calls) == 1 and len(values) == 1 else None

    def _makers_of(self, receiver: cst.BaseExpression, scope: cst.CSTNode) -> list:
        """What made the object `receiver` names: the values assigned the name in the scope or at
        module level, those of `self.<attr>` (what the module's constructions hand `__init__`
        for it), or the call itself (`Hook().after_eval(...)`)."""
        if isinstance(receiver, cst.Name):
            made = [value for where, value in self._assigned(receiver.value) if where in (scope, self.module)]
            return made or self._handed_makers(receiver.value, scope)
        if is_self_attribute(receiver):
            return [made for method, name, value in self._self_assignments if name == receiver.attr.value
                    for made in self._handed_in(method, value)]
        return [receiver] if isinstance(receiver, cst.Call) else []

    def _handed_makers(self, parameter: str, scope: cst.CSTNode) -> list:
        """What made the object this module's calls of the function `scope` hand it as `parameter`
        (`train(model, RunningMean())`, or a name assigned one), once per function at a time."""
        if not isinstance(scope, cst.FunctionDef) or scope in self._handing_makers \
                or parameter not in {param.name.value for param in scope.params.params}:
            return []
        self._handing_makers.add(scope)
        try:
            handed = self.arguments_for(scope, parameter)
        finally:
            self._handing_makers.discard(scope)
        return [made for value in handed
                for made in ([value] if isinstance(value, cst.Call) else
                             [v for _, v in self._assigned(value.value)] if isinstance(value, cst.Name) else [])]

    def _state_dict_hook(self, candidate: _Candidate) -> Optional[apis.Api]:
        """`self.model.state_dict()` where the model's class is, or holds in an attribute, a class
        of this module whose `_save_to_state_dict` runs a collective (apis.STATE_DICT_HOOKS):
        nn.Module calls it for every submodule."""
        hook = apis.STATE_DICT_HOOKS.get(candidate.name)
        if hook is None or self._context.index is None:
            return None
        for klass in self._held_classes(self._made_class(candidate)):
            target = self._context.project.method(self._context.index, klass, hook)
            if isinstance(target, FunctionRef) and self._context.summaries.may_run_collective(target):
                summary = self._context.summaries.of(target)
                if summary is not None and summary.api is not None:
                    return apis.Api(candidate.name, apis.OTHER, via=_HookChain(candidate.name, klass, hook, summary.api))
        return None

    def _made_class(self, candidate: _Candidate) -> Optional[str]:
        """The name of the class of this module that made the object a method is called on."""
        if not isinstance(candidate.call.func, cst.Attribute):
            return None
        klass = self._receiver_constructor(candidate)
        return klass.value if isinstance(klass, cst.Name) else None

    def formatting_collective(self, value: cst.BaseExpression, scope: cst.CSTNode) -> Optional[apis.Api]:
        """What formatting the object `value` names runs (`str(meter)`, `"%s" % meter`): the collective
        of its class's `__str__` (or `__repr__`, `__format__`), a project class this module makes it
        of (`meter = PeakMeter()`), or None."""
        if self._context is None or not isinstance(value, cst.Name):
            return None
        made = [made_by for made_by in self._makers_of(value, scope) if _constructs(made_by)]
        classes = {self.code(made_by.func): made_by.func for made_by in made}
        if len(classes) != 1:
            return None
        klass = next(iter(classes.values()))
        for method in ("__str__", "__repr__", "__format__"):
            ref = self._context.method_of(klass, self.qualified_names(klass, scope), method)
            if ref is not None and self._context.summaries.may_run_collective(ref):
                summary = self._context.summaries.of(ref)
                return summary.api if summary is not None else None
        return None

    def _property_why(self, read: cst.Attribute, scope: cst.CSTNode) -> Optional[str]:
        """Why `self.<name>`, read in a method of a class with a property of that name (of the
        module), differs between ranks: what the property returns, read with what the object holds
        (`self.root / "state.pt"`, the root handed to `__init__` from a per-rank scratch directory)."""
        if not (isinstance(read.value, cst.Name) and read.value.value == "self" and isinstance(scope, cst.FunctionDef)):
            return None
        klass = self._method_classes.get(scope)
        properties = self.once(_own_property_methods)
        for owner in ([klass, *self.module_bases(klass)] if klass is not None else []):
            getter = properties.get((owner, read.attr.value))
            if getter is not None and getter is not scope:
                return self._method_returned(getter, callers=False)[0]
        return None

    def _instance_names(self) -> frozenset[str]:
        """The names the module binds to an object of one of its own classes (`norm = Norm(...)`)."""
        if self._instances is None:
            classes = self._module_classes()
            self._instances = frozenset(name for _, name, value in self._assignments
                                        if _constructs_by_name(value) and value.func.value in classes)
        return self._instances

    def _instance_why(self, read: cst.Attribute, scope: cst.CSTNode) -> Optional[str]:
        """Why `norm.frozen` differs between ranks, for `norm` an object of one of the module's
        classes whose methods leave `self.frozen` so (`self.seen += len(obs)`, then
        `self.frozen = self.seen >= WARMUP`, with `obs` of each rank's own length)."""
        if not (isinstance(read.value, cst.Name) and read.value.value in self._instance_names()):
            return None
        klass = self.local_class_of(read.value, scope)
        return self.attributes.held_by(klass).get("self." + read.attr.value) if klass is not None else None

    def _metric_state_why(self, read: cst.Attribute, scope: cst.CSTNode) -> Optional[str]:
        """Why `self.hit_rate.hits` differs between ranks: a state of a torchmetrics metric, read
        from outside the metric (its own methods read it synced in `compute`)."""
        own = isinstance(read.value, cst.Name) and read.value.value == "self"
        if own or read.attr.value not in self.once(_metric_states):
            return None
        owner = self._receiver_class(read.value, scope)
        return METRIC_STATE if owner is not None and owner.startswith("torchmetrics.") else None

    def _data_attributes(self) -> dict[str, str]:
        """The attribute names the module's methods set from the rank's own batch a framework hands
        them (`self.last_loss = loss.item()` in a Trainer's `compute_loss`), or from this process's
        clock (`self.io_seconds += time.monotonic() - start` in a dataset's `__getitem__`): read
        through another object (`self.trainer.last_loss` in a callback,
        `trainer.train_dataloader.dataset.io_seconds`), the value differs between ranks."""
        found: dict[str, str] = {}
        timed = any(f"{read}(" in self.source.text for read in _CLOCK_READS)  # (walk methods only then)
        for method in self._method_classes:
            handed = self._handed_data(method)
            if not handed and not (timed and _times_itself(method)):
                continue
            passed = divergence_of(method, self.conditions, self._names_of, {}, _weak(self.returned_variance),
                                   handed)
            for key, why in passed.held.items():
                if key.startswith("self.") and key.count(".") == 1 and is_data_reason(why):
                    found.setdefault(key.removeprefix("self."), why)
        return found

    def _trackers_on_some_ranks(self, text: str) -> Optional[str]:
        """Why the module's trackers exist on some ranks only: Accelerate's `init_trackers` runs on
        the main process alone (accelerate 1.15.0, accelerator.py:3312 `@on_main_process`), and a
        `wandb.init` under a test on the rank starts a run there alone."""
        if "init_trackers" in text:
            return "Accelerate's init_trackers() makes trackers on the main process only"
        if "wandb" not in text:
            return None
        for call in every_call(self.module):
            if last_name(call.func) == "init" and "wandb.init" in self.qualified_names(call.func):
                path = path_to(self.module, call) or ()
                if any(isinstance(node, cst.If) and self._rank_test(node.test) for node in path):
                    return f"wandb.init() at line {self.position(call).start.line} runs under a test on the rank"
        return None

    def _logging_per_rank(self, text: str) -> Optional[int]:
        """The line where the module sets a logging level by a test on the rank (`basicConfig(level=
        WARNING if quiet else INFO)`, `logger.setLevel(...)` or transformers' `set_verbosity_info()`
        under one): `logger.isEnabledFor(INFO)` then differs between ranks."""
        if not any(word in text for word in apis.LEVEL_SETTER_WORDS):
            return None
        for call in every_call(self.module):
            if last_name(call.func) not in apis.LEVEL_SETTERS:
                continue
            path = path_to(self.module, call) or ()
            scope = next((node for node in reversed(path) if isinstance(node, cst.FunctionDef)), self.module)
            tests = [node.test for node in every_node(call, cst.IfExp)]
            tests += [node.test for node in path if isinstance(node, cst.If)]
            # `quiet = rank != 0` in the function, then `WARNING if quiet else INFO`
            tests += [value for test in tests if isinstance(test, cst.Name)
                      for where, value in self._assigned(test.value) if where is scope]
            if any(self._rank_test(test) for test in tests):
                return self.position(call).start.line
        return None

    def environment_where(self, variable: str) -> Optional[str]:
        """Where this module's process sets `variable` under a test on the rank ("line 10",
        "mod_tracking.py:10"), or None."""
        if self._context is not None and self._context.summary:
            return None  # a helper's summary holds for any caller
        return self.per_file(self._environment_per_rank).get(variable)

    def _environment_per_rank(self, text: str) -> dict[str, str]:
        """Each environment variable this module's process sets under a test on the rank -> where:
        a write at the top level of the module, or in a function the module calls, its own or
        one it imports from the project. Computed once per file, at its first read of the
        environment."""
        context = self._context
        index = context.index if context is not None else None
        called = set(_CALLED_NAME.findall(text))
        own = index.environment_per_rank if index is not None else set_per_rank(text)
        found = {write.variable: f"line {write.line}" for write in own
                 if write.function is None or write.function.rpartition(".")[2] in called}
        for bound, target in (index.bindings.items() if index is not None else ()):
            if bound not in called:
                continue
            ref = context.project.resolve(target, index.location.root)
            helper = context.project.index(ref.path) if isinstance(ref, FunctionRef) else None
            for write in helper.environment_per_rank if helper is not None else ():
                if write.function == ref.qualname:
                    found.setdefault(write.variable, f"{os.path.basename(ref.path)}:{write.line}")
        return found

    def divergence_in(self, scope: cst.CSTNode) -> Divergence:
        """What differs between ranks in `scope`, which may hold no collective of its own (computed
        once per scope)."""
        return self._caller_divergence(scope, {site.call: site for site in self.calls})

    def _entry(self, scope: cst.CSTNode) -> dict:
        """What a scope's pass starts with: what its object holds (ClassAttributes) and what the
        module's own names it reads hold (_globals_read)."""
        return {**self._globals_read(scope), **self.attributes.entry(scope)}

    def _globals_read(self, scope: cst.CSTNode) -> dict:
        """The module-level names that differ between ranks once the module's top level has run
        (`SCRATCH = JOB_DIR / f"node{RANK}"`), with why, for a function that reads them; empty for
        the module itself, and while the module's own pass runs."""
        if isinstance(scope, cst.Module) or self._module_end is _COMPUTING:
            return {}
        if self._module_end is None:
            self._module_end = _COMPUTING
            end = divergence_of(self.module, self.conditions, self._names_of, {}, _weak(self.returned_variance)).end
            self._module_end = {key: why for key, why in end.items() if why and "." not in key.removeprefix("#len ")}
        return self._module_end

    def handed_divergence(self, scope: cst.FunctionDef) -> Divergence:
        """What differs between ranks in `scope`, started with what its callers, the framework (a
        hook's batch) and its object hand it (computed once per scope)."""
        if scope in self._handed_passes:
            return self._handed_passes[scope]
        collectives = {site.call: site for site in self.calls}
        return self._cached(self._handed_passes, scope, lambda: divergence_of(
            scope, self.conditions, self._names_of, collectives, _weak(self.returned_variance),
            self._varying_parameters(scope, collectives), self._entry(scope)))

    def divergence_as_called(self, scope: cst.FunctionDef, call: cst.Call, caller: cst.CSTNode) -> Divergence:
        """What differs between ranks in `scope` as `call` in `caller` runs it: each parameter holds
        what the argument holds there, a rank's own batch included (handed_divergence takes a batch's
        values as alike, for tests of its structure: `if labels is None`)."""
        collectives = {site.call: site for site in self.calls}
        held = divergence_of(caller, self.conditions, self._names_of, {**collectives, call: None},
                             _weak(self.returned_variance), self._varying_parameters(caller, collectives),
                             self._entry(caller))  # (the caller's own parameters as its callers hand them)
        parameters = {name: (why, held.length_at(call, value))
                      for name, value in bound_arguments(scope, call, scope in self._method_classes)
                      if (why := held.value_at(call, value))}
        return divergence_of(scope, self.conditions, self._names_of, collectives, _weak(self.returned_variance),
                             parameters, self._entry(scope))

    def overrides_a_collective_hook(self) -> bool:
        """Whether the module defines a method whose result a framework feeds to its collectives: a
        `training_step`, whose loss the Lightning Trainer's DDP backward all-reduces, or an
        `on_train_batch_start`, whose -1 ends the epoch's loop; or wraps a class of its own in
        DistributedDataParallel, whose backward all-reduces what its `forward` used. The rules read
        such a module even where it calls no collective itself."""
        return any(self.methods_named(name) for name in ("training_step", "on_train_batch_start")) \
            or ("DistributedDataParallel" in self.whole_text() and bool(self.methods_named("forward")))

    def methods_named(self, name: str) -> list[tuple[cst.FunctionDef, cst.ClassDef]]:
        """(method, its class) for the module's methods called `name`."""
        return [(method, klass) for method, klass in self._method_classes.items() if method.name.value == name]

    def class_of(self, method: cst.FunctionDef) -> Optional[cst.ClassDef]:
        """The class whose body defines `method`, or None for a function."""
        return self._method_classes.get(method)

    def local_class_of(self, receiver: cst.BaseExpression, scope: cst.CSTNode) -> Optional[cst.ClassDef]:
        """The class of this module that made the object `receiver` names (`metric` for `metric =
        ReciprocalRank()` in the scope or at module level), when one class did."""
        if not isinstance(receiver, cst.Name):
            return None
        classes = self._module_classes()
        made = {value.func.value for value in self._makers_of(receiver, scope)
                if _constructs_by_name(value) and value.func.value in classes}
        return classes[made.pop()] if len(made) == 1 else None

    def module_class(self, name: str) -> Optional[cst.ClassDef]:
        """The module's top-level class `name`, or None."""
        return self._module_classes().get(name)

    def _module_classes(self) -> dict[str, cst.ClassDef]:
        """The module's top-level classes by name (the last of a name, as Python binds it)."""
        if self._classes_by_name is None:
            self._classes_by_name = {s.name.value: s for s in self.module.body if isinstance(s, cst.ClassDef)}
        return self._classes_by_name

    def _held_classes(self, klass: Optional[str]) -> list[str]:
        """`klass` and the classes of this module its methods construct into its attributes
        (`self.norm = RunningNorm(4)`), theirs in turn: its submodules' classes."""
        local = self._module_classes()
        found = [klass] if klass in local else []
        for name in found:  # grows while it is read
            for method, _, value in self._self_assignments:
                owner = self._method_classes.get(method)
                if owner is not None and owner.name.value == name and _constructs(value) \
                        and isinstance(value.func, cst.Name) and value.func.value in local and value.func.value not in found:
                    found.append(value.func.value)
        return found

    def _called_module(self, candidate: _Candidate):
        """`self.norm(x)`, `block(x)` for an instance of a project class, or of a container made of
        them (`nn.Sequential(nn.Linear(...), CrossReplicaNorm(w))`): calling it runs `forward`
        (nn.Module's `__call__`) or `__call__`; the first of the classes' that may run a collective."""
        func = candidate.call.func
        if isinstance(func, cst.Name):
            made = [value for scope, value in self._assigned(func.value) if scope in (candidate.scope, self.module)]
            if not made and candidate.scope not in self._handing:
                # a parameter: what the module's calls of the function hand it (`generate(model, p)`);
                # finding those calls resolves calls in turn, which may lead back here
                self._handing.add(candidate.scope)
                try:
                    handed = self.arguments_for(candidate.scope, func.value)
                finally:
                    self._handing.discard(candidate.scope)
                made = [*handed, *(value for argument in handed if isinstance(argument, cst.Name)
                                   for _, value in self._assigned(argument.value))]
        elif is_self_attribute(func):
            made = [made for method, name, value in self._self_assignments if name == func.attr.value
                    for made in self._handed_in(method, value)]
        else:
            return None
        for construction in (inner for value in made for inner in _constructions_in(value)):
            qualified = self.qualified_names(construction.func, candidate.scope)
            for method in ("forward", "__call__"):
                ref = self._context.method_of(construction.func, qualified, method)
                if ref is not None and (self._context.summaries.may_run_collective(ref)
                                        or self._runs_one_here(ref) is not None):
                    self._module_calls.add(candidate.call)
                    return ref
        return None

    def _runs_one_here(self, ref: FunctionRef) -> Optional[CallSite]:
        """The call in a method of this module's classes that this analysis finds runs a
        collective, where its summary (its text alone) cannot tell: `self.head(x)` in a forward,
        with `self.head = ShardedLinear(w)` whose forward all-gathers; or None."""
        if ref.path != self._context.index.path or ref in self._running_here:
            return None
        method = self._own_methods().get(ref.qualname)
        if method is None:
            return None
        if self._candidates_by_scope is None:
            self._candidates_by_scope = {}
            for candidate in self._project_calls.values():
                self._candidates_by_scope.setdefault(candidate.scope, []).append(candidate)
        self._running_here.add(ref)
        try:
            return next(filter(None, map(self._classify, self._candidates_by_scope.get(method, ()))), None)
        finally:
            self._running_here.discard(ref)

    def assigned_values(self, name: str) -> list[cst.BaseExpression]:
        """The values of each `name = value` in the module."""
        return [value for _, value in self._assigned(name)]

    def values_in_scope(self, name: str, scope: cst.CSTNode) -> list[cst.BaseExpression]:
        """The values of each `name = value` in `scope`'s own body."""
        return [value for where, value in self._assigned(name) if where is scope]

    def _assigned(self, name: str) -> list:
        """(scope, value) of each `name = value` in the module (an index: the receivers' lookups
        scanned every assignment, the square of the module)."""
        if self._assignments_by_name is None:
            self._assignments_by_name = {}
            for scope, target, value in self._assignments:
                self._assignments_by_name.setdefault(target, []).append((scope, value))
        return self._assignments_by_name.get(name, [])

    def _entered_as(self, name: str) -> list:
        """(scope, call) of each `with call as name` in the module, indexed as _assigned is."""
        if self._entered_by_name is None:
            self._entered_by_name = {}
            for scope, target, value in self._entered:
                self._entered_by_name.setdefault(target, []).append((scope, value))
        return self._entered_by_name.get(name, [])

    def _handed_in(self, method: cst.CSTNode, value: cst.BaseExpression) -> list:
        """`value`, or, for a parameter of `__init__` (`self.checkpointer = checkpointer`), what the
        module's constructions of the class pass for it: `Hook(Checkpointer(...))`, or a name
        assigned `Checkpointer(...)`."""
        owner = self._method_classes.get(method)
        if not (isinstance(value, cst.Name) and owner is not None and method.name.value == "__init__"):
            return [value]
        handed = [argument for call in self._constructions(owner.name.value)
                  for name, argument in bound_arguments(method, call, method=True) if name == value.value]
        names = {argument.value for argument in handed if isinstance(argument, cst.Name)}
        return [*handed, *(made for name in names for _, made in self._assigned(name))]

    def _constructions(self, klass: str) -> list:
        """The calls of `klass` (by its name) in the module."""
        if self._calls_by_name is None:
            self._calls_by_name = {}
            for call in every_call(self.module):
                self._calls_by_name.setdefault(last_name(call.func), []).append(call)
        return self._calls_by_name.get(klass, [])

    def _project_api(self, candidate: _Candidate) -> Optional[apis.Api]:
        """A re-exported collective, or a project function every caller runs a collective in."""
        target = self._target(candidate, names_collective)
        if isinstance(target, str):
            return apis.CATALOG.get(target)
        mapped = _mapped_entry(target) if isinstance(target, FunctionRef) else None
        if mapped is not None:  # linting a mapped framework itself: `barrier()` inside ignite.distributed.utils
            return apis.framework_api(mapped)
        if isinstance(target, FunctionRef) and self._context.summaries.may_run_collective(target):
            summary = self._context.summaries.of(target)
            if summary is None or (summary.group and _passes(candidate.call, summary.group)):
                return None  # over the caller's own group: see summaries._on_a_group
            if summary.api is not None and (candidate.call in self._module_calls or candidate.name in _DUNDERS):
                return replace(summary.api, qualified_name=last_name(candidate.call.func))  # `self.norm(x)`: "norm()"
            return summary.api or _flagged(summary, candidate.call) or self._handed_framework_object(candidate)
        inner = self._runs_one_here(target) if isinstance(target, FunctionRef) else None
        if inner is not None:  # `model(ids)`, whose forward calls a module that all-gathers
            return apis.Api(last_name(candidate.call.func) or target.short_name, apis.OTHER,
                            via=CallChain(self, inner))
        dispatched = self._dispatched_by_name(candidate)
        summary = self._context.summaries.of(dispatched) if dispatched is not None else None
        if summary is not None and summary.api is not None:  # `self.fire("on_log")`, which runs cb.on_log
            return replace(summary.api, qualified_name=last_name(candidate.call.func) or dispatched.short_name)
        return self._handed_framework_object(candidate)

    def _handed_framework_object(self, candidate: _Candidate) -> Optional[apis.Api]:
        """`save_outputs(rows, confusion, out_dir)`, a project function that calls
        `confusion.compute()`, handed a torchmetrics metric: the call runs that framework method
        inside (hi-ml#261). Read from the function's text, for arguments of a mapped class only."""
        owners = [(arg, self._receiver_class(arg.value, candidate.scope)) for arg in candidate.call.args]
        if not any(owner for _, owner in owners):
            return None
        target = self._target(candidate)  # any project function: its text need not name a collective
        if not isinstance(target, FunctionRef):
            return None
        text = _function_text(self._context.project, target)
        function = self._parsed_function(target, text)
        if function is None:
            return None
        method = "." in target.qualname
        by_argument = {id(arg.value): owner for arg, owner in owners if owner}
        for parameter, value in bound_arguments(function, candidate.call, method):
            owner = by_argument.get(id(value))
            for inner in every_call(function) if owner else ():
                func = inner.func
                if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                        and func.value.value == parameter):
                    continue
                entry = frameworks.load().method(owner, func.attr.value)
                if entry is not None and self._switched_on(entry, value):
                    line = _line_naming(f"{parameter}.{func.attr.value}(", target, self._context.project)
                    return apis.Api(last_name(candidate.call.func) or target.short_name, apis.HIDDEN,
                                    inside=f"calls {parameter}.{func.attr.value}() ({line}), which {entry.runs}")
        return None

    def _parsed_function(self, target: FunctionRef, text: str) -> Optional[cst.FunctionDef]:
        """The project function `target` (its `text`), parsed once per analysis."""
        if target not in self._parsed_functions:
            try:
                body = cst.parse_module(textwrap.dedent(text)).body
            except cst.ParserSyntaxError:  # a text cut out of its file that LibCST cannot take alone
                body = ()
            self._parsed_functions[target] = next((s for s in body if isinstance(s, cst.FunctionDef)), None)
        return self._parsed_functions[target]

    def _qualname(self, scope: cst.CSTNode) -> Optional[str]:
        """"f" or "Class.method" for a function scope, None at module level."""
        if not isinstance(scope, cst.FunctionDef):
            return None
        owner = self._method_classes.get(scope)
        return f"{owner.name.value}.{scope.name.value}" if owner is not None else scope.name.value

    def _summary_for(self, call: cst.CSTNode) -> Optional[Summary]:
        """The summary of the project function `call` calls, when it may test a rank."""
        candidate = self._project_calls.get(call) if isinstance(call, cst.Call) else None
        if candidate is None:
            return None
        target = self._target(candidate, names_rank)
        if not isinstance(target, FunctionRef) or not self._context.summaries.may_test_rank(target):
            return None
        return self._context.summaries.of(target)

    def _passing_summary(self, call: cst.Call) -> Optional[Summary]:
        """The summary of the project function `call` calls, for what it passes on of its
        arguments: read whether or not it may test a rank."""
        candidate = self._project_calls.get(call)
        target = self._target(candidate) if candidate is not None else None
        return self._context.summaries.of(target) if isinstance(target, FunctionRef) else None

    def _helper_truth(self, call: cst.CSTNode, world: World) -> Optional[bool]:
        """`is_main_process()` defined as `return dist.get_rank() == 0`: its value in `world`."""
        summary = self._summary_for(call)
        return summary.rank_truth(world) if summary is not None else None

    def _certainly_none(self, call: cst.CSTNode, world: World) -> bool:
        """Whether the project function `call` calls returns None in `world` on every path."""
        summary = self._summary_for(call)
        return summary is not None and summary.certainly_none_in(world)

    def returned_variance(self, call: cst.Call, length: bool, arguments: dict, item: Optional[int] = None) -> Optional[str]:
        """Why what the project function `call` calls returns (with `length`: how many items it
        holds) differs between ranks, from its summary, or None: it does on some ranks whatever
        it is handed, or it passes on an argument that differs (`arguments`: position or keyword
        -> why). With `item`: of that item of the tuple it returns (`x, y = read_part(rank)`)."""
        if self._context is None:
            return None
        if item is not None:
            return self._returned_item(call, length, item, arguments)
        handed = next((why for why, _ in arguments.values() if why), None) if arguments and not length else None
        if handed and call in self._module_calls:  # a module's output follows its input: `logits = model(ids)`
            return returned_by(f"'{self.code(call.func)}()'", handed) or handed
        if handed and call in self._framework_forwards:  # `model(ids)` through DDP or FSDP: computed from `ids`
            return handed
        decorator = self._swallowed().get(call.func.value) if isinstance(call.func, cst.Name) and not length else None
        if decorator is not None:
            return f"'{call.func.value}()' returns None on a rank whose work fails there (@{decorator})"
        summary = self._summary_for(call)
        why = summary and (summary.varies_length if length else summary.varies)
        if not why and summary is not None and not length:
            why = self._environment_reason(summary.environment_reads)
        if why == RANK and summary.rank_named and not length:
            return NAMED_AFTER_RANK.format(f"'{self.code(call.func)}()'")  # `f"ckpt_{rank}.pt"`: a path of its own
        if why == RANK and length:  # `[load(n) for n in FILES[rank::world]]`: a count the rank decides
            return RankKind(COUNTED_FROM_RANK.format(f"'{self.code(call.func)}()'"))
        if why:
            return returned_by(f"'{self.code(call.func)}()'", why)
        why = self._own_method_returns(call, length)
        if why == RANK:  # no helper's truth follows a method of the module's own classes
            return RankKind(COMPUTED_FROM_RANK.format(f"'{self.code(call.func)}()'"))
        if why:
            return returned_by(f"'{self.code(call.func)}()'", why)
        why = self._constructed_length(call) if length else None
        if why:
            return why  # a sampler of one's own, striding by its rank
        summary = self._passing_summary(call) if arguments else None
        if summary is not None and summary.agreed and not length:
            return AGREED  # `global_mean(fabric, loss)` returning `fabric.all_reduce(loss).item()`
        passed = summary.passed_on(arguments, length) if summary is not None else None
        if passed == RANK and not length:
            # `load_logits(i)` with `i` one of the rank's own ids: the worlds do not follow an
            # argument into the function, so they cannot tell on which ranks it returns None
            return RankKind(COMPUTED_FROM_RANK.format(f"'{self.code(call.func)}()'"))
        if not passed and length and summary is not None and summary.varies_length:
            # `negatives.topk(min(K, negatives.numel()))` of a masked selection: as many as the data keeps
            passed = returned_by(f"'{self.code(call.func)}()'", summary.varies_length)
        return passed or (self._own_function_length(call) if length else None)

    def computed_from_rank(self, call: cst.CSTNode) -> bool:
        """Whether the project function `call` calls returns a number made from the rank that is
        neither the rank nor a test on it (`max(range(world), key=lambda r: sizes[r])` with
        `sizes[rank]` set), which the worlds do not follow and returned_variance leaves alone: a
        helper named after a rank returns one rank or another of a group (`get_global_rank`)."""
        summary = self._summary_for(call)
        return summary is not None and summary.varies == RANK and not summary.truth \
            and "rank" not in summary.ref.qualname.rsplit(".", 1)[-1].lower()

    def _returned_item(self, call: cst.Call, length: bool, item: int, arguments: dict) -> Optional[str]:
        """returned_variance for one item of the tuples the function returns, from its summary:
        what it returns whatever it is handed, else what it passes on of `arguments`."""
        summary = self._summary_for(call)
        why = summary.items[item][1 if length else 0] if summary is not None and item < len(summary.items) else None
        if not why:
            passing = self._passing_summary(call) if arguments else None
            return passing.passed_item(item, arguments, length) if passing is not None else None
        if why == RANK and length:  # `x = torch.randn(12 if rank == 0 else 10, 4)`: a count the rank decides
            return RankKind(COUNTED_FROM_RANK.format(f"'{self.code(call.func)}()'"))
        return returned_by(f"'{self.code(call.func)}()'", why) if why else None

    def _environment_reason(self, variables: frozenset) -> Optional[str]:
        """Why a value read from one of the environment `variables` differs between ranks."""
        for variable in sorted(variables):
            where = self.environment_where(variable)
            if where is not None:
                return RankKind(ENVIRONMENT.format(variable, where))
        return None

    def _own_function_length(self, call: cst.Call) -> Optional[str]:
        """Why how many items what a function of this module returns differs between ranks, read
        with this module's classes, which its summary (the function's text alone) cannot see:
        `DataLoader(ds, sampler=StridedSampler(ds, world, rank))` with the sampler a class here.
        Its parameters are not seeded: what this call passes is the summary's (passed_on)."""
        candidate = self._project_calls.get(call)
        target = self._target(candidate) if candidate is not None else None
        if not isinstance(target, FunctionRef) or "." in target.qualname or target.path != self._context.index.path:
            return None
        function = self._own_functions().get(target.qualname)
        if function is None:
            return None
        why = self._method_returned(function, callers=False)[1]
        return returned_by(f"'{self.code(call.func)}()'", why) if why else None

    def module_function(self, name: str) -> Optional[cst.FunctionDef]:
        """The module's top-level function `name`, or None."""
        return self._own_functions().get(name)

    def returned_length(self, function: cst.FunctionDef) -> Optional[str]:
        """Why how many items what `function` (of this module) returns differs between ranks, read
        without its callers: a masked selection of what it is handed (`logits[labels != -100]`)."""
        return self._method_returned(function, callers=False)[1]

    def calls_passing(self, keyword: str) -> list[cst.Call]:
        """The module's calls that pass `keyword=` (`Trainer(..., preprocess_logits_for_metrics=f)`)."""
        return [call for call in every_call(self.module)
                if any(arg.keyword is not None and arg.keyword.value == keyword for arg in call.args)]

    def _own_method_returns(self, call: cst.Call, length: bool) -> Optional[str]:
        """Why what a method of one of this module's classes returns (or how many items) differs
        between ranks, read with what its object holds (ClassAttributes): a summary reads the
        method's own text alone, blind to `self.path = f"state_rank{rank}.json"` in `__init__`."""
        candidate = self._project_calls.get(call)
        target = self._target(candidate) if candidate is not None else None
        method = self._own_methods().get(target.qualname) \
            if isinstance(target, FunctionRef) and target.path == self._context.index.path else None
        if method is None:
            return None
        returns, returns_length = self._method_returned(method)
        return returns_length if length else returns

    def _method_returned(self, method: cst.FunctionDef, callers: bool = True) -> tuple[Optional[str], Optional[str]]:
        """(why what `method` returns differs between ranks, why how many items it holds does),
        read with what its object holds (and, with `callers`, what this module's calls of it
        pass); unknown for a method that (indirectly) calls itself and deep in a chain of methods."""
        if method in self._method_returns:
            return self._method_returns[method]
        if method in self._method_returns_running or len(self._method_returns_running) >= _NESTED_METHODS:
            self._returns_cut_short += 1
            self._cut_short_methods.add(method)
            return None, None
        entry = self.attributes.entry(method)
        # Read while its class's attributes are computed, it starts knowing nothing of them: kept
        # apart, for as long as the same classes are computed (each round of theirs asks again).
        # An answer that cut a method short is kept as well, as a settled one is.
        unsettled = None if self.attributes.settled(method) else (method, callers, self.attributes.computing())
        if unsettled in self._unsettled_returns:
            return self._unsettled_returns[unsettled]
        self._method_returns_running.add(method)
        try:
            found = self._method_pass(method, entry, callers)
        finally:
            self._method_returns_running.discard(method)
        if method in self._cut_short_methods and (found.returns or found.returns_length) \
                and method not in self._forgotten_for:  # (once: an unsettled method is computed again)
            self._forgotten_for.add(method)
            self._cut_short_wrong = True
        if not self._method_returns_running:
            self._forget_provisional()
        returned = (found.returns, found.returns_length)
        if unsettled is None:
            self._method_returns[method] = returned
        else:
            self._unsettled_returns[unsettled] = returned
        return returned

    def _constructed_length(self, call: cst.Call) -> Optional[str]:
        """Why how many items an object of one of this module's classes holds differs between
        ranks: what its `__len__` returns, or how many items its `__iter__` hands out (a sampler
        striding by its own rank, `range(self.rank, n, self.world)`)."""
        if not isinstance(call.func, cst.Name):
            return None
        methods = self._own_methods()
        length, iterate = methods.get(f"{call.func.value}.__len__"), methods.get(f"{call.func.value}.__iter__")
        for method, position in ((length, 0), (iterate, 1)):
            if method is not None:
                why = self._method_returned(method)[position]
                if why:  # `range(self.rank, n, self.world)`: a rank's own share, of a length it decides
                    return UNEVEN_PIECE if why == RANK else why
        return None

    def _own_methods(self) -> dict[str, cst.FunctionDef]:
        """"Class.method" -> the method, for the classes at this module's top level."""
        if self._methods_by_name is None:
            top = {id(statement) for statement in self.module.body}
            self._methods_by_name = {f"{klass.name.value}.{method.name.value}": method
                                     for method, klass in self._method_classes.items() if id(klass) in top}
        return self._methods_by_name

    def own_function(self, name: str) -> Optional[cst.FunctionDef]:
        """The module's top-level function called `name`, or None."""
        return self._own_functions().get(name)

    def _own_functions(self) -> dict[str, cst.FunctionDef]:
        """"function" -> the function, for this module's top-level functions."""
        if self._functions_by_name is None:
            self._functions_by_name = {s.name.value: s for s in self.module.body if isinstance(s, cst.FunctionDef)}
        return self._functions_by_name

    def inlined_return(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """What the project function `call` calls returns, when its body is one `return`, with
        its parameters replaced by `call`'s arguments (or their defaults): `receive_buffer(n)`
        defined as `return torch.zeros(n, device=device)` reads `torch.zeros(n, device="cpu")`.
        None when a parameter is neither passed nor defaulted, or the function is not known."""
        candidate = self._project_calls.get(call) if self._context is not None else None
        target = self._target(candidate) if candidate is not None else None
        return self._inlined(target, call) if isinstance(target, FunctionRef) else None

    def _inlined(self, target: FunctionRef, call: cst.Call) -> Optional[cst.BaseExpression]:
        """What `target` returns, its body one `return`, with `call`'s arguments in (inlined_return)."""
        function = self._returning_function(target)
        returned = single_return(function) if function is not None else None
        if returned is None:
            return None
        method = bool(function.params.params) and function.params.params[0].name.value in ("self", "cls")
        passed = dict(bound_arguments(function, call, method))
        defaults = {p.name.value: p.default for p in (*function.params.params, *function.params.kwonly_params) if p.default}
        values = {name: passed.get(name, defaults.get(name)) for name in parameter_positions(function, method)}
        if any(value is None for value in values.values()):
            return None
        return returned.visit(_Substitution(values))

    def returning_function(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        """The project function `call` calls, as written (not as the cut left it), when it returns."""
        candidate = self._project_calls.get(call) if self._context is not None else None
        target = self._target(candidate) if candidate is not None else None
        return self._returning_function(target) if isinstance(target, FunctionRef) else None

    def _returning_function(self, target: FunctionRef) -> Optional[cst.FunctionDef]:
        """The project function `target`, parsed once per analysis, when its text returns."""
        text = _function_text(self._context.project, target)
        return self._parsed_function(target, text) if "return" in text else None

    def rank_chosen_class(self, call: cst.Call, scope: cst.CSTNode) -> Optional["RankChosenClass"]:
        """`reporter.end_step()` where `reporter` is made as one class or another by a test on the
        rank (`A() if rank == 0 else B()` or an `if`/`else` assigning each, here or as what a
        project factory returns), and the
        method of one class may run a collective while the other's runs none."""
        func = call.func
        if not isinstance(func, cst.Attribute) or self._context is None or self._context.index is None:
            return None
        makers = self._makers_of(func.value, scope)
        for choice in [self._class_choice(made, scope) for made in makers] + [self._branch_choice(makers, scope)]:
            if choice is None:
                continue
            test, arms, index, maker = choice
            names = [arm.func.value for arm in arms]
            refs = [self._context.project.method(index, name, func.attr.value) if maker else
                    self._context.method_of(arm.func, self.qualified_names(arm.func, scope), func.attr.value)
                    for name, arm in zip(names, arms)]
            if None in refs:
                continue  # a class not of the project, or without the method: not known
            runs = [self._context.summaries.may_run_collective(ref) for ref in refs]
            if runs.count(True) != 1:
                continue
            running = runs.index(True)
            summary = self._context.summaries.of(refs[running])
            if summary is not None and summary.api is not None and self.varies_by_rank(test):
                return RankChosenClass(test, running == 0, names[running], names[1 - running], summary.api, maker)
        return None

    def _branch_choice(self, makers: list, scope: cst.CSTNode):
        """As _class_choice, for `if test: r = A() else: r = B()` in `scope`: the `if` whose two arms
        each hold one of two constructions of different classes that make the object."""
        made = [m for m in makers if _constructs_by_name(m)]
        if len(made) != 2 or made[0].func.value == made[1].func.value:
            return None
        for branch in every_node(scope, cst.If):
            if not isinstance(branch.orelse, cst.Else):
                continue
            arms = [next((m for m in made if any(node is m for node in every_node(part, cst.Call))), None)
                    for part in (branch.body, branch.orelse.body)]
            if None not in arms and arms[0] is not arms[1]:
                return branch.test, arms, self._context.index, None
        return None

    def _class_choice(self, made: cst.BaseExpression, scope: cst.CSTNode):
        """(the test, the two constructions, the index of their module, what makes them) for
        `A(...) if test else B(...)`, written here or returned by the project function `made` calls."""
        index, maker = self._context.index, None
        if isinstance(made, cst.Call) and not isinstance(made.func, cst.Attribute):
            target = self._context.target(made.func, self.qualified_names(made, scope), None, False)
            if not isinstance(target, FunctionRef):
                return None
            index, maker = self._context.project.index(target.path), f"{self.code(made.func)}()"
            made = self._inlined(target, made)
        if not isinstance(made, cst.IfExp) or index is None:
            return None
        arms = [arm for arm in (made.body, made.orelse) if _constructs_by_name(arm)]
        if len(arms) != 2 or arms[0].func.value == arms[1].func.value:
            return None
        return made.test, arms, index, maker

    def _swallowed(self) -> dict[str, str]:
        """The module's functions under a decorator that turns an exception into `return None`
        (this module's or one imported from the project), each with the decorator's name."""
        if self._swallowed_functions is None:
            decorators = _swallowing_decorators(self.module) | _imported_swallowing(self.module, self._context)
            self._swallowed_functions = {
                statement.name.value: name for statement in self.module.body if isinstance(statement, cst.FunctionDef)
                for decorator in statement.decorators for name in (last_name(decorator.decorator),) if name in decorators}
        return self._swallowed_functions

    def calls_project_function(self, call: cst.Call) -> bool:
        """Whether `call` calls a function of the project (one with a summary)."""
        candidate = self._project_calls.get(call) if self._context is not None else None
        return candidate is not None and isinstance(self._target(candidate), FunctionRef)

    def returns_none_on(self, expr: cst.BaseExpression, world: World) -> bool:
        """Whether `expr` calls a project function that returns None in `world` (and a value on
        other ranks): `def load(): if not state.is_main_process: return None ...`."""
        summary = self._summary_for(expr)
        return summary is not None and summary.returns_none_in(world)

    def _known(self, candidate: _Candidate) -> bool:
        """Whether a call named like a collective resolved to something that is not one."""
        from bcast_lint.analysis.project import names_collective

        if _indexing_gather(candidate.call):
            return True
        qualified = self.qualified_names(candidate.call, candidate.scope)
        context = self._context
        if not qualified:  # `self.m(...)`, or a function of this module: a project function?
            return context is not None and self._target(candidate, names_collective) is not None
        if context is None or context.index is None or not any(
                context.project.is_project_name(name, context.index.location.root) for name in qualified):
            return True
        return self._target(candidate, names_collective) is not None

    def coverage(self, tree: Optional[ast.Module] = None, counted: frozenset = frozenset()) -> Coverage:
        """What was analysed; `tree`, CPython's parse of the original file, gives the unresolved
        calls' lines without LibCST's position metadata (which costs a codegen of the module).
        Module-level calls on the original lines `counted` are left out (see engine.run_rules)."""
        if tree is not None and self._unresolved:
            source = self._context.index.lines if self._context and self._context.index else None
            lines = _call_lines(tree, {name for name, _, _ in self._unresolved}, self.source.parsed_lines, source)
            unresolved = [(lines[name][ordinal], name, call) for name, ordinal, call in self._unresolved]
        else:
            unresolved = [(self.position(call).start.line, name, call) for name, _, call in self._unresolved]
        unresolved = [entry for entry in unresolved if entry[0] not in counted]
        calls = [site for site in self.calls if not (counted and isinstance(site.scope, cst.Module)
                                                     and self.position(site.call).start.line in counted)]
        return Coverage(len(calls), tuple((line, _called_text(call, name)) for line, name, call in unresolved),
                        self._by_framework(calls, [name for _, name, _ in unresolved]))

    def _by_framework(self, calls: Sequence[CallSite], unresolved_names: Sequence[str]) -> tuple[tuple[str, int, int], ...]:
        """The analysed calls by the framework of what they call; the unresolved ones by a framework
        the module imports that has a call of that name (see _framework_named)."""
        analysed = Counter(frameworks.framework_of((site.api.qualified_name,)) for site in calls)
        imported = {frameworks.framework_of((target,)) for _, _, target in self._resolver_imports}
        unresolved = Counter(_framework_named(name, imported) for name in unresolved_names)
        return tuple((name, analysed[name], unresolved[name]) for name in sorted(analysed.keys() | unresolved.keys()))

    def _is_accelerator_method(self, candidate: _Candidate) -> bool:
        func = candidate.call.func
        if candidate.name not in apis.ACCELERATOR_METHODS or not isinstance(func, cst.Attribute):
            return False
        if candidate.name in apis.UNAMBIGUOUS_ACCELERATOR_METHODS:
            return True
        return self._names_accelerator(func.value)

    def _names_accelerator(self, receiver: cst.BaseExpression) -> bool:
        """`accelerator`, `self.accelerator`, or a name the module assigns an Accelerator."""
        name = last_name(receiver)
        return name is not None and (
            "accelerator" in name.lower() or any(bound == name for _, bound, _ in self._accelerator_assignments()))

    def _prepared_iteration(self, candidate: _Candidate) -> Optional[apis.Api]:
        """`iter(loader)` (`next(iter(loader))`) of a shuffled DataLoader that `accelerator.prepare`
        wrapped: accelerate's DataLoaderShard.__iter__ synchronises the shuffling generator's state
        with a broadcast from the main process at the start of each pass."""
        call = candidate.call
        if candidate.name != "iter" or not isinstance(call.func, cst.Name) or len(call.args) != 1 \
                or not isinstance(call.args[0].value, cst.Name):
            return None
        if not self.prepared_shuffled_loader(call.args[0].value.value, candidate.scope, call):
            return None
        return apis.Api("iter", apis.HIDDEN, inside=PREPARED_ITERATION)

    def prepared_shuffled_loader(self, loader: str, scope: cst.CSTNode, use: cst.CSTNode) -> bool:
        """Whether `loader` holds, where `use` reads it in `scope`, a shuffled DataLoader that
        `accelerator.prepare` wrapped (both assigned in the scope before `use`; a loader prepared
        after it is a plain one)."""
        assignments = [assign for assign in every_node(scope, cst.Assign) if isinstance(assign.value, cst.Call)
                       and any(loader in _bound_names(t.target) for t in assign.targets)]
        prepares = [assign for assign in assignments if last_name(assign.value.func) == "prepare"
                    and isinstance(assign.value.func, cst.Attribute) and self._names_accelerator(assign.value.func.value)]
        shuffles = [assign for assign in assignments if last_name(assign.value.func) == "DataLoader"
                    and isinstance(argument_value(assign.value, None, "shuffle"), cst.Name)
                    and argument_value(assign.value, None, "shuffle").value == "True"]
        if not (prepares and shuffles):
            return False  # (most loaders: no position is resolved for them)
        line = self.position(use).start.line
        return any(self.position(assign).start.line < line for assign in prepares) \
            and any(self.position(assign).start.line < line for assign in shuffles)

    def _framework_method(self, candidate: _Candidate) -> Optional[apis.Api]:
        """`trainer.save_checkpoint(...)`, `self.log(..., sync_dist=True)`, `accelerator.save_state(...)`:
        the method of a framework object. Its class comes from what the code says the object is
        (a base class, a hook's parameter, a constructor, an annotation, what a framework object hands
        out); failing that, from the receiver's name (apis.Receiver), for a few methods only."""
        func = candidate.call.func
        if not isinstance(func, cst.Attribute) or candidate.name in _MAIN_FIRST_METHODS:
            return None  # its barriers are modelled as the block's rank context (candidate.main_process_first)
        owner = self._receiver_class(func.value, candidate.scope)
        if owner in _JOINABLES and _under_a_with(candidate, lambda statement: _joins(statement, func.value)):
            return None  # `with Join([model, opt]):` shadows `opt.step()` for ranks out of batches
        if owner is not None:
            entry = frameworks.load().method(owner, candidate.name)
            if entry is None or not self._switched_on(entry, func.value, candidate.scope):
                return None  # `MeanSquaredError(sync_on_compute=False).compute()`
            return _called_on(apis.framework_api(entry), func.value)
        receiver = last_name(func.value)
        if receiver is None or receiver == "self":
            return None  # inside the framework's own class, or a subclass: its own business
        for kind, api in apis.FRAMEWORK_METHODS.get(candidate.name, ()):
            if any(word in receiver.lower() for word in kind.words) or self._assigned_class(receiver, kind):
                return _called_on(api, func.value)
        return None

    def _partial_api(self, candidate: _Candidate) -> Optional[apis.Api]:
        """`reduce(x)` for `reduce = functools.partial(dist.all_reduce, op=...)`, or `self.reduce(x)`
        for an attribute set to one, directly or from what the module's constructions of the class
        hand `__init__`: calling a partial calls the function it wraps, with its arguments first."""
        func = candidate.call.func
        if isinstance(func, cst.Name):
            made = [(scope, value) for scope, value in self._assigned(func.value)
                    if scope is candidate.scope or scope is self.module]
        elif is_self_attribute(func):
            made = [handed for method, name, value in self._self_assignments if name == func.attr.value
                    for handed in self._handed_in_scopes(method, value)]
        else:
            return None
        for scope, value in made:
            if not (isinstance(value, cst.Call) and last_name(value.func) == "partial" and value.args
                    and value.args[0].keyword is None) or value in self._unwrapping:
                continue  # (`fn = partial(fn, x)` wraps what `fn` held before: not followed)
            wrapped = value.args[0].value
            given = [arg.with_changes(comma=cst.MaybeSentinel.DEFAULT) for arg in (*value.args[1:], *candidate.call.args)]
            positional = [arg for arg in given if arg.keyword is None and not arg.star]
            call = cst.Call(func=wrapped, args=[*positional, *(arg for arg in given if arg not in positional)])
            self._unwrapping.add(value)
            try:
                inner = self._classify(replace(candidate, call=call, name=last_name(wrapped) or "", scope=scope))
            finally:
                self._unwrapping.discard(value)
            if inner is not None:
                return inner.api
        return None

    def _handed_in_scopes(self, method: cst.CSTNode, value: cst.BaseExpression) -> list:
        """(scope, value) for `value`, or, for a parameter of `__init__`, each argument the module's
        constructions of the class pass for it, with the scope that passes it."""
        owner = self._method_classes.get(method)
        if not (isinstance(value, cst.Name) and owner is not None and method.name.value == "__init__"):
            return [(method, value)]
        return [(site.scope, argument) for site in self._construction_sites() if site.klass is owner
                for name, argument in bound_arguments(method, site.call, method=True) if name == value.value]

    def _forward_of(self, candidate: _Candidate) -> Optional[apis.Api]:
        """`ddp(x)` for `ddp = DDP(model)`: calling a DistributedDataParallel wrapper runs its forward,
        which broadcasts the module's buffers unless it was made with `broadcast_buffers=False`."""
        func = candidate.call.func
        if not isinstance(func, cst.Name) and not is_self_attribute(func):
            return None
        owner = self._receiver_class(func, candidate.scope)
        if owner is not None and owner not in apis.FORWARD_RUNS_COLLECTIVES:
            entry = frameworks.load().method(owner, "forward")  # `metric(preds, target)`
            if entry is None or entry.name not in apis.SWITCHED_ON_BY or not self._switched_on(entry, func):
                return None
            runs = apis.SWITCHED_ON_BY[entry.name][1]
            return _called_on(replace(apis.framework_api(entry), inside=f"{runs} ({entry.framework} {entry.version})"),
                              func)
        if owner is None:
            return None
        if owner == _DDP and (_under_a_with(candidate, _joins_uneven_inputs)
                              or self._wraps_no_buffers(func, candidate.scope)):
            self._framework_forwards.add(candidate.call)  # no collective, but its output is still its input's
            return None
        runs, switches = apis.FORWARD_RUNS_COLLECTIVES[owner]
        entry = frameworks.load().method(owner, "forward")
        if entry is None or any(self.made_with(func, keyword, "False") for keyword in switches):
            return None
        api = replace(apis.framework_api(entry), inside=f"{runs} ({entry.framework} {entry.version})")
        if owner == _DDP and _grad_free(candidate):
            # `_pre_forward` syncs the buffers under `require_forward_param_sync`, which a forward
            # without grad sets False (torch nn/parallel/distributed.py:1841): the first such call syncs.
            api = replace(api, first_call_only="DDP's forward without grad broadcasts the buffers only after a "
                                               "forward with grad")
        self._framework_forwards.add(candidate.call)  # its output is its input's (returned_variance)
        return _called_on(api, func)

    def _wraps_no_buffers(self, ddp: cst.BaseExpression, scope: cst.CSTNode) -> bool:
        """`DDP(nn.Sequential(nn.Linear(4, 8), nn.Tanh()))`: a module built only of layers without
        buffers, whose forward broadcasts nothing (torch nn/parallel/distributed.py
        `will_sync_module_buffers`: `len(self.modules_buffers) > 0`)."""
        makings = self._makings(ddp, scope)
        return bool(makings) and all(isinstance(made, cst.Call) and made.args
                                     and self._bufferless(made.args[0].value, scope, 0) for made in makings)

    def _bufferless(self, module: cst.BaseExpression, scope: cst.CSTNode, depth: int) -> bool:
        if isinstance(module, cst.Name) and depth < 2:  # `model = nn.Sequential(...)`, then `DDP(model)`
            makings = self._makings(module, scope)
            return bool(makings) and all(self._bufferless(made, scope, depth + 1) for made in makings)
        if not isinstance(module, cst.Call):
            return False
        name = last_name(module.func)
        if name == "Sequential":
            return all(self._bufferless(arg.value, scope, depth) for arg in module.args)
        return name in _BUFFERLESS_LAYERS and "torch.nn" in "".join(self.qualified_names(module.func, scope))

    def _wrapped_backward(self, candidate: _Candidate) -> Optional[apis.Api]:
        """`loss.backward()` where `loss` comes from a forward pass of a DistributedDataParallel
        wrapper in the same scope (`loss = F.mse_loss(ddp(x), y)`, one assignment deep): DDP's
        reducer all-reduces the gradients in autograd hooks, unless inside `with ddp.no_sync():`."""
        func = candidate.call.func
        if candidate.name != "backward" or not isinstance(func, cst.Attribute) \
                or _under_a_with(candidate, _syncs_off) or _under_a_with(candidate, _joins_uneven_inputs):
            return None
        # `loss.backward()`, or a loss made on the spot: `logits.sum().backward()`, `(loss / k).backward()`
        receiver = func.value
        names = [receiver.value] if isinstance(receiver, cst.Name) else sorted(names_read(receiver))
        if not isinstance(receiver, (cst.Name, cst.Call, cst.BinaryOperation)) or not names:
            return None
        inline = [call for call in every_call(receiver) if self._forward_of_ddp(call, candidate.scope)]
        if any(not self._wraps_no_buffers(call.func, candidate.scope) for call in inline):
            return None  # `ddp(x).sum().backward()`: the forward on the line, a collective too, stands for both
        values = [receiver, *(value for name in names for value in self._made_from_in_scope(name, candidate.scope))]
        if not any(self._forward_of_ddp(call, candidate.scope) or self._helper_forward_of_ddp(call, candidate.scope)
                   for value in values for call in every_call(value)):
            return None
        return apis.Api("torch.Tensor.backward", apis.HIDDEN, receiver=node_code(receiver),
                        inside=f"runs the gradient all_reduce() of DDP's reducer inside (torch {_TORCH})")

    def _made_from_in_scope(self, name: str, scope: cst.CSTNode) -> list[cst.BaseExpression]:
        """The values `name` is assigned in `scope`, and those of the names they read, a few
        assignments deep: a PPO loss made from `ratio`, made from `logp`, made from `policy(obs)`."""
        values: list[cst.BaseExpression] = []
        seen, pending = {name}, [name]
        for _ in range(_LOSS_DEPTH):
            assigned = [value for one in pending for where, value in self._assigned(one) if where is scope]
            values += assigned
            pending = [read for value in assigned for read in names_read(value) if read not in seen]
            seen.update(pending)
        return values

    def _forward_of_ddp(self, call: cst.Call, scope: cst.CSTNode) -> bool:
        func = call.func
        if not isinstance(func, cst.Name) and not is_self_attribute(func):
            return False
        return self._receiver_class(func, scope) == _DDP

    def _helper_forward_of_ddp(self, call: cst.Call, scope: cst.CSTNode) -> bool:
        """`train_on(model, optimizer, x)`: a function of this module handed a DistributedDataParallel
        wrapper, which it calls (`model(tokens)`): what it returns comes from DDP's forward pass."""
        function = self.module_function(call.func.value) if isinstance(call.func, cst.Name) else None
        if function is None:
            return False
        called = {inner.func.value for inner in every_call(function) if isinstance(inner.func, cst.Name)}
        parameters = tuple((param.name.value, index) for index, param in enumerate(function.params.params))
        for parameter, value in handed_arguments(call, parameters):
            if parameter in called and isinstance(value, cst.Name) and self._receiver_class(value, scope) == _DDP:
                return True
        return False

    def _switched_on(self, entry, receiver: cst.BaseExpression, within: Optional[cst.CSTNode] = None) -> bool:
        """Whether the object `receiver` names (in `within`, where known) runs the collective of
        `entry`: not made with a keyword that turns it off (apis.SWITCHED_OFF_BY), and made with
        one that turns it on where it is off by default (apis.SWITCHED_ON_BY)."""
        if any(self.made_with(receiver, keyword, "False", within=within)
               for keyword in apis.SWITCHED_OFF_BY.get(entry.name, ())):
            return False
        keyword = apis.SWITCHED_OFF_IN_ITEMS.get(entry.name)
        if keyword is not None and self._items_made_with(receiver, keyword, "False"):
            return False
        needed, _ = apis.SWITCHED_ON_BY.get(entry.name, (None, None))
        return needed is None or any(self.made_with(receiver, keyword, "True") for keyword in needed)

    def _items_made_with(self, func: cst.BaseExpression, keyword: str, value: str) -> bool:
        """Whether every object of the collection `func` names was made passing `keyword=<value>`:
        `MetricCollection({"acc": MulticlassAccuracy(..., sync_on_compute=False), ...})`."""
        items = [item for made_by in self._makings(func, None) if made_by.args
                 for item in literal_items(made_by.args[0].value)]
        return bool(items) and all(_passes_name(item, keyword, value) for item in items)

    def made_with(self, func: cst.BaseExpression, keyword: str, value: str, scope: Optional[cst.CSTNode] = None,
                  within: Optional[cst.CSTNode] = None) -> bool:
        """Whether the object `func` names (`ddp`, `self.model`) was made by a call passing
        `keyword=<value>` ("False", "True"), or by a class of the module that hands its base so;
        with `scope`, a name made there (or at module level) is judged by those makings alone;
        `within`: the function `func` is read in, whose callers hand it a parameter."""
        if isinstance(func, cst.Attribute) and value == "False" \
                and any(keyword in false for _, false in self._summarised_attribute(func.attr.value)):
            return True
        calls = self._makings(func, scope, within)
        # A class of the module that hands its base the keyword: `super().__init__(sync_on_compute=False)`.
        classes = self._module_classes()
        calls += [call for made_by in list(calls) if isinstance(made_by.func, cst.Name) and made_by.func.value in classes
                  for call in every_node(classes[made_by.func.value], cst.Call)
                  if last_name(call.func) == "__init__" and calls_super(call.func)]
        return any(_passes_name(call, keyword, value) for call in calls)

    def _makings(self, func: cst.BaseExpression, scope: Optional[cst.CSTNode],
                 within: Optional[cst.CSTNode] = None) -> list[cst.Call]:
        """The calls that made the object `func` names (`metrics`, `self.model`); with `scope`, a
        name made there (or at module level) by those alone; a parameter of `within`, by what this
        module's calls of it hand it (`evaluate(model, x, y, f1)`)."""
        if isinstance(func, cst.Name):
            made = [made_by for _, made_by in self._assigned(func.value)]
            if scope is not None:
                made = [made_by for where, made_by in self._assigned(func.value) if where in (scope, self.module)] or made
            made.append(self._iterated_element(func.value, None))  # `for metric in metrics.values()`
        else:
            made = [made_by for _, name, made_by in self._self_assignments if name == func.attr.value]
        calls = [made_by for made_by in made if isinstance(made_by, cst.Call)]
        if not calls and isinstance(func, cst.Name) and isinstance(within, cst.FunctionDef) \
                and _parameter(func.value, within) is not None:
            handed = self.arguments_for(within, func.value)
            calls = [value for value in handed if isinstance(value, cst.Call)] \
                + [made_by for value in handed if isinstance(value, cst.Name) for made_by in self._makings(value, None)]
        if not calls and isinstance(func, cst.Name):
            # A parameter, in a helper's summary read apart from its callers: the objects the
            # file's other functions make under that name (`metrics = MetricCollection(...)` in
            # `main`, handed to `test(model, loader, metrics)`).
            calls = list(self.per_file(_calls_assigned).get(func.value, ()))
        return calls

    # -- what a framework object is ---------------------------------------------------------------
    def receiver_class(self, expr: cst.BaseExpression, scope: cst.CSTNode) -> Optional[str]:
        """The mapped framework class of the object `expr` names in `scope` (`fabric` for
        `fabric = L.Fabric(...)`: "lightning.fabric.fabric.Fabric"), or None."""
        return self._receiver_class(expr, scope)

    def _receiver_class(self, expr: cst.BaseExpression, scope: cst.CSTNode, depth: int = 0) -> Optional[str]:
        """The mapped framework class (frameworks.FrameworkMap) of the object `expr` names, or None."""
        if isinstance(expr, cst.Name):
            if expr.value == "self":
                return self._mapped_base(self._method_classes.get(scope))
            return self._class_of_name(expr.value, scope, depth)
        if isinstance(expr, cst.Call):  # made in place: `Saver(ZeroRedundancyOptimizer(...))`
            return self._mapped_class(expr.func, scope) or self._local_subclass(expr.func) \
                or self._copied_class(expr, scope, depth)
        if isinstance(expr, cst.Attribute) and depth < 3:
            if isinstance(expr.value, cst.Name) and expr.value.value == "self":
                assigned = self._self_attribute_class(expr.attr.value, scope, depth)
                if assigned is not None:
                    return assigned
            owner = self._receiver_class(expr.value, scope, depth + 1)
            if owner is not None:
                return frameworks.load().attributes.get(owner, {}).get(expr.attr.value)
        return None

    def _mapped_class(self, expr: cst.BaseExpression, scope: cst.CSTNode, hooks: bool = False) -> Optional[str]:
        """The mapped class (or, with `hooks`, the hook class) an expression names through imports."""
        framework_map = frameworks.load()
        for qualified in self.qualified_names(expr, scope):
            canonical = framework_map.canonical(qualified)
            if framework_map.is_class(canonical) or (hooks and canonical in framework_map.hook_parameters):
                return canonical
        return None

    def _mapped_base(self, klass: Optional[cst.ClassDef], hooks: bool = False, depth: int = 0) -> Optional[str]:
        """`class M(L.LightningModule)`, or a class of this module deriving from one."""
        if klass is None or depth > 3:
            return None
        for base in klass.bases:
            mapped = self._mapped_class(base.value, self.module, hooks)
            if mapped is None and isinstance(base.value, cst.Name):
                local = next((s for s in self.module.body if isinstance(s, cst.ClassDef)
                              and s.name.value == base.value.value), None)
                mapped = self._mapped_base(local, hooks, depth + 1)
            if mapped is not None:
                return mapped
        return None

    def _class_of_name(self, name: str, scope: cst.CSTNode, depth: int = 0) -> Optional[str]:
        """A parameter annotated with a mapped class, handed by a hook (`on_validation_end(self,
        trainer, pl_module)` of a Callback) or by this module's calls, or a name assigned a mapped
        class's instance."""
        param = _parameter(name, scope)
        if param is not None:
            # A parameter bound again in its function (`model = DDP(model)`) is what it is bound to.
            # (A test of what a parameter is, `isinstance(grad, DTensor)`, says nothing of the rank.)
            return self._parameter_class(param, scope, depth) or self._made_in(name, (scope,), depth) \
                or self._tested_class(name, scope, self._wrapped_modules)
        mapped = self._made_in(name, (scope, self.module), depth)
        if mapped is not None:
            return mapped
        element = self._iterated_element(name, scope)
        if element is not None:  # `for src, metric in metrics.items()`, `metrics = {s: MAE() for s in S}`
            mapped = self._mapped_class(element.func, scope) or self._local_subclass(element.func)
            if mapped is not None:
                return mapped
        return self._tested_class(name, scope, self._type_tests + self._wrapped_modules) \
            or self._mapped_instance(name)

    def _tested_class(self, name: str, scope: cst.CSTNode, tests: list) -> Optional[str]:
        """`value.full_tensor() if isinstance(value, DTensor) else value`, `with FSDP.state_dict_type(
        model, ...): model.state_dict()`: the scope says what it is (anywhere in it; a mapped method of
        that class is called on it only where it is one)."""
        tested = (self._mapped_class(klass, scope) for where, tested, klass in tests
                  if where is scope and tested == name)
        return next((mapped for mapped in tested if mapped is not None), None)

    def _made_in(self, name: str, places: tuple, depth: int = 0) -> Optional[str]:
        """The mapped class (or the module's subclass of one) an assignment of `name` in one of
        `places` constructs, or copies (`swa = AveragedModel(ddp)`)."""
        # `with LocalSGD(...) as local_sgd:`, whose `__enter__` returns the object (a mapped class's)
        for where, value in [*self._assigned(name), *self._entered_as(name)]:
            if any(where is place for place in places) and isinstance(value, cst.Call):
                mapped = self._mapped_class(value.func, where) or self._local_subclass(value.func) \
                    or self._sharded_class(value.func, where) or self._copied_class(value, where, depth)
                if mapped is not None:
                    return mapped
        return None

    def _copied_class(self, made: cst.Call, scope: cst.CSTNode, depth: int) -> Optional[str]:
        """The class of what `copy.deepcopy(ddp)` or `AveragedModel(ddp)` copies: a DDP module too."""
        if depth >= 3 or not made.args or not set(self.qualified_names(made.func, scope)) & _COPIES_OF_THEIR_ARGUMENT:
            return None
        return self._receiver_class(made.args[0].value, scope, depth + 1)

    def _sharded_class(self, func: cst.BaseExpression, scope: cst.CSTNode) -> Optional[str]:
        """`fully_shard(model)` returns (and makes) a module of FSDP2's class."""
        if any(name in apis.SHARDS_IN_PLACE for name in self.qualified_names(func, scope)):
            return apis.FSDP2_MODULE
        return None

    def _parameter_class(self, param: cst.Param, scope: cst.CSTNode, depth: int) -> Optional[str]:
        """The mapped class of a parameter of `scope`: by its annotation, by the hook that hands
        it, or by what this module's calls pass."""
        if param.annotation is not None:
            return self._mapped_class(param.annotation.annotation, self.module)
        hook = self._mapped_base(self._method_classes.get(scope), hooks=True)
        if hook:
            return frameworks.load().hook_parameters.get(hook, {}).get(param.name.value)
        return self._handed_class(scope, param.name.value, depth)

    def _iterated_element(self, name: str, scope: Optional[cst.CSTNode]) -> Optional[cst.Call]:
        """The construction that makes the items a `for` loop or a comprehension binds `name` to,
        where it iterates a container the same scope (or the module; any scope for None, any method
        for `self.x`) fills with such: `for metric in metrics.values()` (or `.items()`, `sorted(...)`,
        or the list itself) after `metrics = {src: MeanAbsoluteError() for src in S}`, or over
        `self.metrics` filled by `self.metrics.setdefault(lang, Accuracy())` or `self.metrics[lang] = Accuracy()`."""
        if self._loop_items is None:
            self._loop_items = _loop_items(self._loops)
        for container in self._loop_items.get(name, ()):
            for where, made in self._container_items(container):
                if (scope is None or where is scope or where is self.module or container.startswith("self.")) \
                        and isinstance(made, cst.Call):
                    return made
        return None

    def _container_items(self, container: str) -> list[tuple[cst.CSTNode, cst.BaseExpression]]:
        """(scope, item) for what makes the items of `container` ("metrics", "self.metrics"): the
        comprehension it is assigned, and what is put into it."""
        if container.startswith("self."):
            made = [(where, value) for where, name, value in self._self_assignments if name == container[5:]]
        else:
            made = self._assigned(container)
        items = [(where, value.value if isinstance(value, cst.DictComp) else value.elt)
                 for where, value in made if isinstance(value, (cst.DictComp, cst.ListComp, cst.GeneratorExp))]
        return items + self._filled.get(container, [])

    def _mapped_instance(self, name: str) -> Optional[str]:
        """Linting a mapped framework itself: the class of one of its module variables (ignite's
        `_model`), which the map records where the module rebinds it."""
        if self._context is None or self._context.index is None:
            return None
        return frameworks.load().instances.get(f"{self._context.index.location.name}.{name}")

    def _local_subclass(self, func: cst.BaseExpression) -> Optional[str]:
        """`MyMetric()` for a `class MyMetric(Metric)` of this module: the mapped class it derives from."""
        if not isinstance(func, cst.Name):
            return None
        local = next((s for s in self.module.body if isinstance(s, cst.ClassDef) and s.name.value == func.value), None)
        return self._mapped_base(local)

    def _handed_class(self, function: cst.FunctionDef, parameter: str, depth: int) -> Optional[str]:
        """The mapped class of what this module's calls of `function` (its class's constructions,
        for an `__init__`) pass as `parameter`: `Checkpointer(model, ZeroRedundancyOptimizer(...))`."""
        if depth >= 3:
            return None
        method = function in self._method_classes
        for caller in self.calls_of(function):
            for name, value in bound_arguments(function, caller.call, method):
                found = self._receiver_class(value, caller.scope, depth + 1) if name == parameter else None
                if found is not None:
                    return found
        return None

    def _self_attribute_class(self, attribute: str, scope: cst.CSTNode, depth: int = 0) -> Optional[str]:
        """`self.fabric` where a method of the same class assigns `self.fabric = Fabric(...)`, or
        `self.optimizer = optimizer`, a parameter its callers pass one."""
        klass = self._method_classes.get(scope)
        for method, name, value in self._self_assignments:
            if name != attribute or self._method_classes.get(method) is not klass:
                continue
            mapped = (self._mapped_class(value.func, method) or self._local_subclass(value.func)) \
                if isinstance(value, cst.Call) else \
                self._class_of_name(value.value, method, depth + 1) if isinstance(value, cst.Name) else None
            if mapped is not None:
                return mapped
        for where, obj, name, value in self._object_assignments:  # `callback.trainer = trainer`
            if name != attribute or klass is None or not self._instance_of(obj, where, klass):
                continue
            mapped = self._mapped_class(value.func, where) if isinstance(value, cst.Call) else \
                self._class_of_name(value.value, where, depth + 1) if isinstance(value, cst.Name) else None
            if mapped is not None:
                return mapped
        framework_map = frameworks.load()
        return next((framework_map.canonical(qualified) for qualified, _ in self._summarised_attribute(attribute)
                     if framework_map.is_class(qualified)), None)

    def _instance_of(self, name: str, scope: cst.CSTNode, klass: cst.ClassDef) -> bool:
        """`name` holds an instance of this module's class `klass` in `scope` (`callback = Saver(...)`)."""
        return any(isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
                   and value.func.value == klass.name.value for where, value in self._assigned(name) if where is scope)

    def _typed_rank_test(self, expr: cst.Attribute) -> Optional[str]:
        """A rank test known by what its receiver is: `args.should_save` of a TrainingArguments."""
        return self._training_arguments.property_of(expr)

    def _summarised_attribute(self, attribute: str) -> tuple[tuple[str, frozenset], ...]:
        """A method analysed alone (a summary) does not see its class: what the class's methods
        assign `self.<attribute>`, from the module's index (project.ModuleIndex.attributes)."""
        context = self._context
        if context is None or not context.summary or context.klass is None or context.index is None:
            return ()
        return context.index.attributes.get(f"{context.klass}.{attribute}", ())

    def _assigned_class(self, name: str, kind: apis.Receiver) -> bool:
        """`name = SFTTrainer(...)` somewhere in the module, for a class `kind` names; or `name`
        holds the first item of what a factory of `kind` returns (`name, *_ = deepspeed.initialize(...)`,
        `name = deepspeed.initialize(...)[0]`)."""
        return any(isinstance(value, cst.Call) and (last_name(value.func) or "").endswith(kind.classes)
                   for _, value in self._assigned(name)) or (bool(kind.factories) and any(
                       target == name and self._made_by(value, kind, scope)
                       for scope, target, value in (*self._first_items, *self._first_of_subscripts())))

    def _first_of_subscripts(self) -> Iterator[tuple[cst.CSTNode, str, cst.BaseExpression]]:
        """`name = value[0]`, as (scope, name, value)."""
        for scope, name, value in self._assignments:
            if isinstance(value, cst.Subscript) and len(value.slice) == 1 \
                    and isinstance(value.slice[0].slice, cst.Index) \
                    and integer_literal(value.slice[0].slice.value) == 0:
                yield scope, name, value.value

    def _made_by(self, value: cst.BaseExpression, kind: apis.Receiver, scope: cst.CSTNode) -> bool:
        return isinstance(value, cst.Call) and not self.qualified_names(value, scope).isdisjoint(kind.factories)

    def _accelerator_assignments(self) -> Iterator[tuple[cst.CSTNode, str, cst.BaseExpression]]:
        """`name = Accelerator(...)` / `PartialState()` / `AcceleratorState()` anywhere."""
        for scope, name, value in self._assignments:
            if isinstance(value, cst.Call) and last_name(value.func) in _ACCELERATOR_CLASSES:
                yield scope, name, value

    def accelerator_in_scope(self, site: CallSite) -> Optional[str]:
        """A name bound to an Accelerator/PartialState in the call's scope or at module level."""
        for scope, name, _ in self._accelerator_assignments():
            if scope is site.scope or scope is self.module:
                return name
        return None

    def local_rank_in_scope(self, site: CallSite) -> Optional[str]:
        """A variable holding the local rank, visible where the call is."""
        for name, quantity in self.conditions.rank_variables.items():
            if quantity != LOCAL_RANK:
                continue
            bound_here = any(name in env for env in site.reached.values())
            at_module_level = any(scope is self.module and n == name for scope, n, _ in self._assignments)
            if bound_here or at_module_level:
                return name
        return None

    # -- data flow -------------------------------------------------------------------------
    def _run_data_flow(self) -> None:
        by_statement: dict[cst.CSTNode, list[CallSite]] = {}
        scopes: dict[cst.CSTNode, list[CallSite]] = {}
        for site in self.calls:
            by_statement.setdefault(site.statement, []).append(site)
            scopes.setdefault(site.scope, []).append(site)

        exits_by_statement: dict[cst.CSTNode, list] = {}
        exiting = exiting_functions(self.module)
        for scope, sites in scopes.items():
            self.exits[scope] = scope_exits(scope, {site.call for site in sites}, exiting)
            for exit_ in self.exits[scope].exits:
                exits_by_statement.setdefault(exit_.statement, []).append(exit_)

        def observe(world: World, statement: cst.CSTNode, env: Env) -> None:
            for site in by_statement.get(statement, ()):
                previous = site.reached.get(world)
                site.reached[world] = env if previous is None else merge_envs((previous, env))
            for exit_ in exits_by_statement.get(statement, ()):
                if exit_.taken_in(world, self.conditions):
                    exit_.reached.add(world)

        collectives = {site.call: site for site in self.calls}
        for scope in scopes:
            self.divergence.update(divergence_of(scope, self.conditions, self._names_of, collectives,
                                                 _weak(self.returned_variance),
                                                 self._varying_parameters(scope, collectives),
                                                 self._entry(scope)))
        self.conditions.varying = {**self.divergence.tests, **self.divergence.raising}

        for scope, sites in scopes.items():
            setup = self._setup_methods(scope, _attribute_keys(sites))
            literals = [n for part in (scope, *setup) for n in self.conditions.compared_literals(part)]
            literals += [site.source_rank or 0 for site in sites]
            focus, largest_group_literal = self.conditions.group_focus(
                scope, [group_key(site.group) if site.group is not None else None for site in sites])
            self.worlds[scope] = make_worlds(max(literals, default=0), focus, largest_group_literal,
                                             data=scope in self.divergence.scopes)
            entry = self._attribute_entry(scope, _attribute_keys(sites), setup)
            walk_scope(scope, self.worlds[scope], self.conditions, observe, self.bindings, entry)

    def _varying_parameters(self, scope: cst.CSTNode, collectives: dict) -> Parameters:
        """The parameters of `scope` that this module's own calls of it pass values differing
        between ranks (analysis.callers), computed once per scope and set of collectives (a
        method's attribute, caller and data-flow passes all ask)."""
        if not isinstance(scope, cst.FunctionDef):
            return {}
        key = (scope, len(collectives))  # the collectives only grow while the analysis is made
        return self._cached(self._parameters_found, key, lambda: self._find_varying_parameters(scope, collectives))

    def _find_varying_parameters(self, scope: cst.FunctionDef, collectives: dict) -> Parameters:
        handed = self._handed_data(scope)
        if handed or self._context is None or self._context.index is None:
            return handed
        reached = self.calls_of(scope)
        if not reached:
            return {}
        # A parameter the function returns early on is judged where it is called
        # (collective_on_some_ranks._early_return_in_callee), where a fix belongs.
        judged = {parameter for candidate in reached if candidate.call in collectives
                  for parameter, _, _ in collectives[candidate.call].api.returns_early_on}
        callers = {candidate.scope: self._caller_divergence(candidate.scope, collectives) for candidate in reached}
        method = scope in self._method_classes

        def describe(call: cst.Call, value: cst.BaseExpression, why: str) -> str:
            return passed_as(f"line {self.position(call).start.line} passes '{self.code(value)}', and {why}", why)

        found = varying_parameters(scope, method, [(c.call, callers[c.scope]) for c in reached], describe)
        return {name: why for name, why in found.items() if name not in judged}

    def some_ranks_hook(self, scope: cst.CSTNode) -> Optional[str]:
        """How the framework calls `scope` on some ranks only, where it overrides such a method
        (apis.SOME_RANKS_HOOKS: a LightningDataModule's `prepare_data`), or None."""
        hook = apis.SOME_RANKS_HOOKS.get(scope.name.value) if isinstance(scope, cst.FunctionDef) else None
        if hook is None:
            return None
        packages, classes, how = hook
        return how if self.derives_from(self._method_classes.get(scope), packages, classes) else None

    def varies_by_rank(self, test: cst.BaseExpression) -> bool:
        """Whether the rank alone decides `test`, one way on some ranks and the other elsewhere."""
        return self._rank_test(test)

    def _rank_test(self, test: cst.BaseExpression) -> bool:
        """Whether the rank alone decides `test`, one way on some ranks and the other elsewhere."""
        worlds = make_worlds(max(self.conditions.compared_literals(test), default=0))
        outcomes = {self.conditions.evaluate(test, world) for world in worlds}
        return None not in outcomes and len(outcomes) == 2

    def module_bases(self, klass: cst.ClassDef) -> list[cst.ClassDef]:
        """The classes of this module that `klass` derives from, nearest first."""
        classes = self._module_classes()
        found: list[cst.ClassDef] = []
        pending = [klass]
        while pending and len(found) < _NESTED_METHODS:
            names = [base.value.value for base in pending.pop().bases if isinstance(base.value, cst.Name)]
            for base in (classes[name] for name in names if name in classes):
                if base not in found and base is not klass:
                    found.append(base)
                    pending.append(base)
        return found

    def whole_text(self) -> str:
        """The whole file's text: what the cut left of it is `self.source`."""
        context = self._context
        return context.index.source.text if context is not None and context.index is not None else self.source.text

    def uneven_batches_hook(self, scope: cst.CSTNode) -> Optional[str]:
        """How the framework calls `scope` a different number of times on different ranks: a
        LightningModule's per-batch hook (apis.PER_BATCH_HOOKS) runs once per batch of the loader
        its class's `*_dataloader` method returns, where that loader's length differs between
        ranks (a sampler of the module's own, striding by the rank) and the Trainer keeps it
        (`use_distributed_sampler=False`); a prediction hook, whose loader Lightning deals unpadded
        unless the Trainer keeps the module's own sampler; or None."""
        loader_name = apis.PER_BATCH_HOOKS.get(scope.name.value) if isinstance(scope, cst.FunctionDef) else None
        klass = self._method_classes.get(scope) if loader_name else None
        if klass is None or not self.derives_from(klass, ("lightning", "pytorch_lightning"), ("LightningModule",)):
            return None
        if loader_name == "predict_dataloader" and not self.per_file(_keeps_own_samplers):
            return f"Lightning calls '{scope.name.value}' once per batch of the prediction loader, which it deals " \
                   f"with UnrepeatedDistributedSamplerWrapper (lightning {_LIGHTNING}, " \
                   "trainer/connectors/data_connector.py:241): it does not pad, so the ranks hold different numbers " \
                   "of batches unless the rows divide evenly"
        loader = next((m for m in klass.body.body if isinstance(m, cst.FunctionDef) and m.name.value == loader_name), None)
        if loader is None or not self.per_file(_keeps_own_samplers):
            return None
        why = self._method_returned(loader)[1]
        return f"Lightning calls '{scope.name.value}' once per batch of '{loader_name}()', whose length can differ " \
               f"between ranks ({why})" if why else None

    def uneven_trainer_loaders(self) -> Iterator[tuple[cst.FunctionDef, cst.BaseExpression, str]]:
        """(method, the loader it returns, why its length differs between ranks) for each
        `get_train_dataloader` of a transformers Trainer subclass that returns a loader whose
        number of batches differs between ranks. The Trainer iterates what the method returns as
        it is (transformers trainer.py:1612): its default prepares the loader with Accelerate,
        which shards it evenly, and an override that shards by itself keeps its own counts. Where
        the file sets `max_steps`, every rank runs that many steps, cycling its loader as needed."""
        if self.per_file(_sets_max_steps):
            return
        for klass in self._module_classes().values():
            if not self.derives_from(klass, ("transformers",), _TRAINERS):
                continue
            for method in klass.body.body:
                if not (isinstance(method, cst.FunctionDef) and method.name.value == "get_train_dataloader"):
                    continue
                returned = [node.value for node in every_node(method, cst.Return) if node.value is not None]
                why = self._method_returned(method)[1] if returned else None
                if why is not None and why != CONTROL:
                    yield method, returned[-1], why

    def derives_from(self, klass: Optional[cst.ClassDef], packages: tuple, classes: tuple, depth: int = 0) -> bool:
        """`class Data(pl.LightningDataModule)`, or a class of this module deriving from one."""
        if klass is None or depth > 3:
            return False
        for base in klass.bases:
            for qualified in self.qualified_names(base.value, self.module):
                if qualified.split(".")[0] in packages and qualified.rsplit(".", 1)[-1] in classes:
                    return True
            local = next((s for s in self.module.body if isinstance(s, cst.ClassDef) and isinstance(base.value, cst.Name)
                          and s.name.value == base.value.value), None)
            if self.derives_from(local, packages, classes, depth + 1):
                return True
        return False

    def _handed_data(self, method: cst.FunctionDef) -> Parameters:
        """A framework hook's parameters that hold this rank's own batch (apis.DATA_PARAMETERS):
        `batch` of a LightningModule's `validation_step`; the framework's loop is the caller."""
        klass = self._method_classes.get(method)
        hook = self._mapped_base(klass, hooks=True)
        names = apis.DATA_PARAMETERS.get(hook, {}).get(method.name.value, ()) if hook else ()
        shares = apis.SHARE_PARAMETERS.get(hook, {}).get(method.name.value, ()) if hook else ()
        params = method.params.params
        if method.name.value == "__call__" and len(params) > 1 and klass is not None \
                and klass.name.value in self.once(_collator_classes):
            names = (params[1].name.value,)  # a collator is called with each batch of this rank's loader
        elif klass is None and params and method.name.value in self.once(collator_functions):
            names = (params[0].name.value,)
        parameters = {param.name.value for param in params}
        return {**{name: (DATA, None) for name in names if name in parameters},
                **{name: (DATA, _UNPADDED_PREDICTIONS) for name in shares if name in parameters}}


    def arguments_for(self, scope: cst.CSTNode, parameter: str) -> list:
        """The values this module's own calls of the function `scope` pass as `parameter`."""
        if not isinstance(scope, cst.FunctionDef) or self._context is None or self._context.index is None:
            return []
        method = scope in self._method_classes
        return [value for candidate in self.calls_of(scope)
                for name, value in bound_arguments(scope, candidate.call, method) if name == parameter]

    def calls_of(self, scope: cst.FunctionDef) -> list:
        """This module's calls of the function `scope`, outside `scope` itself (with a FileContext
        that has an index); for an `__init__`, the constructions of its class."""
        if self._context is None or self._context.index is None:
            return []
        owner = self._method_classes.get(scope)
        if scope.name.value == "__init__" and owner is not None:
            return [site for site in self._construction_sites() if site.klass is owner]
        qualname, path = self._qualname(scope), self._context.index.path
        return [candidate for candidate in self._project_calls_named(scope.name.value)
                if candidate.scope is not scope and self._reaches(candidate, path, qualname)]

    def _construction_sites(self) -> list["_Construction"]:
        """Calls of the classes at this module's top level (`ClassBalancer(accelerator, mine)`),
        with the function scope each is in."""
        if self._constructions_found is None:
            finder = _ConstructionFinder(self._module_classes(), self.module)
            finder.walk(self.module)
            self._constructions_found = finder.found
        return self._constructions_found

    def _project_calls_named(self, name: str) -> list:
        """The project calls whose callee's last name is `name` (an index: a scan per function
        would cost the square of the module)."""
        if self._project_calls_by_name is None:
            self._project_calls_by_name = {}
            for candidate in self._project_calls.values():
                self._project_calls_by_name.setdefault(last_name(candidate.call.func), []).append(candidate)
        return self._project_calls_by_name.get(name, [])

    def _reaches(self, candidate: _Candidate, path: str, qualname: Optional[str]) -> bool:
        target = self._target(candidate)
        return isinstance(target, FunctionRef) and target.path == path and target.qualname == qualname

    def _caller_divergence(self, scope: cst.CSTNode, collectives: dict) -> Divergence:
        """What differs between ranks in `scope`, with the state at each of its project calls."""
        if scope in self._caller_passes:
            return self._caller_passes[scope]
        made = [site.call for site in self._construction_sites() if site.scope is scope]
        observed = {**{c.call: None for c in self._project_calls.values() if c.scope is scope},
                    **dict.fromkeys(made), **collectives}
        return self._cached(self._caller_passes, scope, lambda: divergence_of(
            scope, self.conditions, self._names_of, observed, _weak(self.returned_variance),
            attributes=self._entry(scope)))

    def _cached(self, cache: dict, key, compute: Callable[[], T]) -> T:
        """`cache[key]`, computed and stored once. An answer that read a method's return while that
        method was computed (its parameters come from this very pass) took it as alike: it serves
        until the outermost method's return is known, then is forgotten if that method's return
        differs between ranks, to be worked out again with it."""
        if key in cache:
            return cache[key]
        cut_short = self._returns_cut_short
        found = cache[key] = compute()
        if self._returns_cut_short != cut_short:
            self._provisional.append((cache, key))
        return found

    def _forget_provisional(self) -> None:
        """Forget the provisional answers where a method they took as alike returns what differs."""
        if self._cut_short_wrong:
            for cache, key in self._provisional:
                cache.pop(key, None)
        self._provisional.clear()
        self._cut_short_methods.clear()
        self._cut_short_wrong = False

    def _method_pass(self, method: cst.FunctionDef, attributes: dict, callers: bool = True) -> Divergence:
        """The divergence pass of `method`, started with what its object holds (ClassAttributes)
        and, with `callers`, with what this module's calls of it pass (analysis.callers)."""
        collectives = {site.call: site for site in self.calls}
        parameters = self._varying_parameters(method, collectives) if callers else None
        return divergence_of(method, self.conditions, self._names_of, collectives,
                             _weak(self.returned_variance), parameters, {**self._globals_read(method), **attributes},
                             self._given_parameters(method) if callers else frozenset())

    def _given_parameters(self, function: cst.FunctionDef) -> frozenset[str]:
        """The parameters every call of `function` in this module passes a value other than None
        (`Sampler(rows, seed=SEED)`): its default, and an `x if x is not None else ...` fallback,
        never apply. Read only for a function with a conditional expression, once per function (its
        passes run again in each round of its class's attributes)."""
        if function not in self._given_found:
            passed = [{name for name, value in bound_arguments(function, candidate.call, function in self._method_classes)
                       if not is_none(value)} for candidate in self.calls_of(function)] \
                if every_node(function, cst.IfExp) else []
            self._given_found[function] = frozenset(set.intersection(*passed)) if passed else frozenset()
        return self._given_found[function]

    def _attribute_pass(self, method: cst.FunctionDef, attributes: dict) -> Divergence:
        """As _method_pass, for what the method leaves in its attributes: only `__init__`'s
        parameters are followed to their callers (`Balancer(mine)`). A value handed to another
        method differs in magnitude (`set_post_size(folder_size)`), which a test on whether the
        attribute is set at all (`gb_size() is None`) cannot tell apart from a value set on some
        ranks only."""
        if method.name.value == "__init__":
            return self._method_pass(method, attributes)
        own = self._method_pass(method, attributes, callers=False)
        if not self._varying_parameters(method, {site.call: site for site in self.calls}):
            return own
        # How many entries a container attribute holds does follow what callers hand the method
        # (`self.counts.setdefault(task, ...)` with `task` of each rank's own records), and so does
        # a running count (`self.seen += len(obs)`): a count is never unset, only larger or smaller.
        handed = self._method_pass(method, attributes)
        accumulated = _accumulated_attributes(method)
        for key, why in handed.held.items():
            if key.startswith(LENGTH_KEY) or key in accumulated:
                own.held.setdefault(key, why)
        return own

    # -- attributes followed across a class's methods ---------------------------------------
    def _setup_methods(self, scope: cst.CSTNode, keys: set) -> list:
        """`__init__` and the setup-like methods of `scope`'s class, in that order, when `scope`
        is a method that broadcasts one of its own attributes: what they assign is taken to be
        there when `scope` runs. Empty when another method assigns such an attribute too (then
        nothing is known of it when `scope` runs)."""
        owner = self._method_classes.get(scope)
        own = self_name(scope)
        if owner is None or own is None or not any(key.startswith(own + ".") for key in keys):
            return []
        methods = [s for s in owner.body.body if isinstance(s, cst.FunctionDef) and s is not scope]
        setup = [m for m in methods if m.name.value == "__init__"]
        setup += [m for m in methods if apis.SETUP_METHOD.match(m.name.value) and m.name.value != "__init__"]
        if any(_assigns(m, keys) for m in methods if m not in setup):
            return []
        return setup

    def _attribute_entry(self, scope: cst.CSTNode, keys: set, setup: list):
        """World -> the definitions of the attributes broadcast in `scope` when it starts: for
        the method's own attributes (`self.weights`), what `__init__` and the setup methods leave
        in that world (unbound where no `__init__` of this class assigns them on that rank); for
        other objects (`obj.x`), unknown."""
        if not keys:
            return None
        own = self_name(scope)
        unknown = {key: frozenset((Definition(key, OTHER),)) for key in keys}
        owned = {key for key in keys if own is not None and key.startswith(own + ".")}
        if not setup or not owned:
            return lambda world: unknown
        # Unbound at the start only where this class's own __init__ is the first to run: a base
        # class's __init__ (inherited, or called through super()) may assign it on every rank.
        fresh = setup[0].name.value == "__init__" and not _calls_super(setup[0])
        start = {key: frozenset((Definition(key, UNBOUND if fresh else OTHER),)) for key in owned}

        def entry(world: World) -> Env:
            env = start
            for method in setup:
                env = final_env(method, world, self.conditions, self.bindings, env)
            return {**unknown, **env}

        return entry

    # -- queries for rules -----------------------------------------------------------------
    def ancestors(self, site: CallSite) -> tuple[cst.CSTNode, ...]:
        """Every node from the call's scope down to the call's parent, outermost first; found
        once per call, from the statements the collector saw around it."""
        found = self._ancestors.get(site.call)
        if found is None:
            found = self._ancestors[site.call] = _ancestors(site, self._statements_around[site.call])
        return found

    def broadcasts(self) -> Iterator[CallSite]:
        return (site for site in self.calls if site.api.is_broadcast)

    def helper_collective_calls(self) -> dict[cst.CSTNode, list[tuple[cst.Call, cst.CSTNode]]]:
        """Scope -> (call, its statement) for the calls of project functions that may run a
        collective but are no collective of their callers (one over a process group the function
        picks itself, `groups["stats"]`, or one some of its callers' arguments skip): what a
        sequence of a scope's collectives holds besides its sites (computed once)."""
        if self._helper_calls is None:
            self._helper_calls = {}
            sites = {site.call for site in self.calls}
            for candidate in self._project_calls.values() if self._context is not None else ():
                if candidate.call in sites:
                    continue
                target = self._target(candidate, names_collective)
                if isinstance(target, FunctionRef) and self._context.summaries.may_run_collective(target):
                    self._helper_calls.setdefault(candidate.scope, []).append((candidate.call, candidate.statement))
        return self._helper_calls

    def calls_in(self, scope: cst.CSTNode) -> Sequence[CallSite]:
        """The calls whose scope is `scope`, in the order of `calls`."""
        return self._call_index()[1].get(scope, ())

    def calls_at(self, statement: cst.CSTNode) -> Sequence[CallSite]:
        """The calls whose innermost statement is `statement`, in the order of `calls`."""
        return self._call_index()[2].get(statement, ())

    def _call_index(self) -> tuple[list, dict, dict]:
        # Built once: rules ask at every call for the calls beside it, and a scan of all of
        # them there made a module's cost grow with the square of its calls.
        if self._calls_by is None or self._calls_by[0] is not self.calls:
            by_scope: dict[cst.CSTNode, list[CallSite]] = {}
            by_statement: dict[cst.CSTNode, list[CallSite]] = {}
            for site in self.calls:
                by_scope.setdefault(site.scope, []).append(site)
                by_statement.setdefault(site.statement, []).append(site)
            self._calls_by = (self.calls, by_scope, by_statement)
        return self._calls_by

    def per_file(self, compute: Callable[[str], T]) -> T:
        """compute(the whole file's text), once per file: a module linted in parts (bcast_lint.parts)
        is analysed once per part, and a scan of the whole text in each would cost its square."""
        memo = self._context._memo if self._context is not None else self._once
        # A method is keyed by its function: the memo is the file's, and outlives this analysis.
        key = ("per_file", getattr(compute, "__func__", compute))
        if key not in memo:
            memo[key] = compute(self.whole_text())
        return memo[key]

    def _failing_of(self, name: str) -> tuple[tuple, frozenset]:
        """The module function `name`'s parameters, and those whose value can make it raise."""
        index = self._context.index if self._context is not None else None
        function = index.functions.get(name) if index is not None else None
        if function is None:
            return (), frozenset()
        parameters, failing = failing_parameters(self._context.project, index, function)
        return parameters, frozenset(failing)

    def _table_copies(self) -> tuple[dict[str, str], dict[str, int]]:
        """table_copies of the module's functions without parameters, each parsed alone from the
        project index (a parse of a whole generated file here, beside its LibCST tree, raised the
        run's peak memory by a fifth), or of the whole text where there is no index."""
        index = self._context.index if self._context is not None else None
        if index is None:
            tree = parsed(self.whole_text())
            return table_copies(tree.body if tree else [], _constants_in(self.whole_text()))
        key = ("table_copies",)
        if key not in index.memo:
            functions = [index.text(function) for name, function in index.functions.items()
                         if "." not in name and _PARAMETERLESS.search(index.text(function))]
            trees = [parsed(text) for text in functions if "return" in text]
            index.memo[key] = table_copies([node for tree in trees if tree for node in tree.body],
                                           _constants_in(index.source.text))
        return index.memo[key]

    def per_module(self, compute: Callable[[str], T]) -> T:
        """compute(the text of the module's whole file), once per module: as per_file, and shared
        with the analyses of its functions alone for their summaries, whose own text is only the
        function's."""
        index = self._context.index if self._context is not None else None
        return self.per_file(compute) if index is None else index.per_module(compute)

    def once(self, compute: Callable[["ModuleAnalysis"], T]) -> T:
        """compute(self), computed once per module: for the module-wide facts that rules and
        fixes read at each site (a walk of the module at every site costs its square)."""
        if compute not in self._once:
            self._once[compute] = compute(self)
        return self._once[compute]  # type: ignore[return-value]

    def payload_names(self, site: CallSite) -> list:
        """Local names (cst.Name) and followed attributes (AttributeName) whose values the call
        broadcasts."""
        if site.payload is None:
            return []
        attributes = [AttributeName(attribute_key(node), node)
                      for node in payload_attributes(site.payload, site.api.nested)]
        return [name for name in (*names_in_payload(site.payload, site.api.nested), *attributes)
                if any(name.value in env for env in site.reached.values())]

    def definitions(self, site: CallSite, name: str) -> dict[World, frozenset]:
        """World -> the definitions of local `name` that reach `site` there."""
        return {world: env[name] for world, env in site.reached.items() if name in env}

    def reaching_values(self, site: CallSite, expr) -> Iterator[cst.BaseExpression]:
        """`expr` itself, or for a local name (or a followed attribute) every value assigned to it
        that reaches `site`."""
        if not isinstance(expr, (cst.Name, AttributeName)):
            yield expr
            return
        for world, definitions in self.definitions(site, expr.value).items():
            for definition in definitions:
                yield from self.values(definition, world)

    def reaching_contents(self, site: CallSite, expr: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
        """As reaching_values, without the values an in-place write (`buf.zero_()`) overwrote
        whole on the way: what the tensor holds may still come from the others."""
        if not isinstance(expr, (cst.Name, AttributeName)):
            yield expr
            return
        for world, definitions in self.definitions(site, expr.value).items():
            for definition in definitions:
                if not definition.overwritten:
                    yield from self.values(definition, world)

    def split_ranks(self, site: CallSite, name: str, is_broken, surely: bool = False) -> Optional["RankSplit"]:
        """Whether `is_broken(definition, world)` holds for `name` at `site` on some ranks but not
        on all of them, and if so, the definitions on the ranks where it is fine. With `surely`,
        broken ranks are those where every definition is broken, fine ones those where some is
        not (`resume` bound in a loop over records only the main process reads)."""
        broken_worlds, broken_definitions, fine = [], [], []
        for world, definitions in self.definitions(site, name).items():
            broken = [d for d in definitions if is_broken(d, world)]
            if broken and (not surely or len(broken) == len(definitions)):
                broken_worlds.append(world)
                broken_definitions.extend(broken)
            else:
                fine.extend(d for d in definitions if d not in broken)
        if not broken_worlds or not fine:
            return None
        return RankSplit(tuple(broken_worlds), tuple(broken_definitions), tuple(fine),
                         self._condition_phrase(fine))

    def _condition_phrase(self, fine_definitions) -> str:
        """"where 'accelerator.is_main_process' is false": the rank test the fine ranks passed."""
        for definition in fine_definitions:
            if definition.guard is not None:
                return f"where {self.test_phrase(definition.guard.test, not definition.guard.polarity)}"
            if isinstance(definition.value, cst.IfExp):
                return f"where {self.test_phrase(definition.value.test, False)}"
        return "on some ranks"

    def values(self, definition: Definition, world: World) -> list[cst.BaseExpression]:
        """The expressions a definition may have produced in `world` (`a if main else b` picks)."""
        if definition.value is None:
            return []
        return list(self._choose(definition.value, world))

    def values_in_world(self, site: CallSite, expr: cst.BaseExpression,
                        world: World) -> Optional[list[cst.BaseExpression]]:
        """What `expr` may be at `site` in `world`: for a local name, the values of the assignments
        reaching it there (None when the name is bound some other way there: a parameter, a loop
        target); otherwise `expr` itself, with `a if test else b` decided where the rank decides."""
        if is_self_attribute(expr):
            held = self._set_once_in_class(site.scope, expr.attr.value)
            return list(self._choose(held if held is not None else expr, world))
        if not isinstance(expr, cst.Name) or expr.value not in site.reached.get(world, {}):
            return list(self._choose(expr, world))
        definitions = site.reached[world][expr.value]
        if any(definition.kind != ASSIGNED for definition in definitions):
            return None
        return [value for definition in definitions for value in self.values(definition, world)]

    def _set_once_in_class(self, scope: cst.CSTNode, attribute: str) -> Optional[cst.BaseExpression]:
        """What `self.<attribute>` holds in a method of `scope`'s class when the class sets it once,
        in a statement of a method's own body (`self._buffer = [None] * world` in `__init__`), not
        under a condition or in a loop."""
        klass = self._method_classes.get(scope)
        values = [(method, value) for method, name, value in self._self_assignments
                  if name == attribute and klass is not None and self._method_classes.get(method) is klass]
        if len(values) != 1:
            return None
        method, value = values[0]
        direct = [small.value for line in method.body.body if isinstance(line, cst.SimpleStatementLine)
                  for small in line.body if isinstance(small, cst.Assign)]
        return value if any(candidate is value for candidate in direct) else None

    def _choose(self, expr: cst.BaseExpression, world: World) -> Iterator[cst.BaseExpression]:
        if not isinstance(expr, cst.IfExp):
            yield expr
            return
        decided = self.conditions.evaluate(expr.test, world)
        if decided is not False:
            yield from self._choose(expr.body, world)
        if decided is not True:
            yield from self._choose(expr.orelse, world)

    def code(self, node: cst.CSTNode) -> str:
        return node_code(node, self.module)

    def test_phrase(self, test: cst.BaseExpression, truth: bool) -> str:
        """"'accelerator.is_main_process' is false": a condition and its value, as messages say it."""
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, truth = test.expression, not truth
        text = self.code(test)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and not truth \
                and isinstance(test.comparisons[0].operator, cst.NotEqual):
            text = f"{self.code(test.left)} == {self.code(test.comparisons[0].comparator)}"
            truth = True  # "'rank == 0' is true" reads better than "'rank != 0' is false"
        return f"'{text}' is {'true' if truth else 'false'}"

    def line_text(self, line: int) -> str:
        """The text of the original file's line `line`, without its line ending."""
        return self.source.line(line)

    def positions_within(self, scope: cst.CSTNode, nodes: Sequence[cst.CSTNode]) -> list[CodeRange]:
        """The nodes' places, to compare with each other only: in the text LibCST parsed, which
        keeps the file's order of lines. `scope` holds them (the positions come from the
        top-level statement around it, as position()'s do)."""
        return [self._positions.of(node) for node in nodes]

    def position(self, node: cst.CSTNode) -> CodeRange:
        """Where `node` is in the original file."""
        where = self._positions.of(node)
        if self.source.parsed_lines is None:
            return where
        original = self.source.original_line
        return CodeRange(CodePosition(original(where.start.line), where.start.column),
                         CodePosition(original(where.end.line), where.end.column))


def _flagged(summary, call: cst.Call) -> Optional[apis.Api]:
    """The function as a collective where `call` passes True to the flag its collective runs under
    (Summary.flagged: `timer.start(barrier=True)`)."""
    if not summary.flagged:
        return None
    name, position, api = summary.flagged
    value = argument_value(call, position, name)
    return replace(api, qualified_name=last_name(call.func) or api.qualified_name) \
        if isinstance(value, cst.Name) and value.value == "True" else None


@dataclass(frozen=True)
class RankChosenClass:
    """A method call whose receiver's class a test on the rank chose (ModuleAnalysis.rank_chosen_class)."""

    test: cst.BaseExpression  # in the caller's names: `rank == 0` for `make_reporter(rank, ...)`
    truth: bool  # the test's value where the class whose method runs a collective is made
    running: str  # that class
    other: str  # the class made elsewhere, whose method runs none
    api: apis.Api  # the running method, seen as a collective (its summary)
    maker: Optional[str]  # "make_reporter()", the project function that makes them; None: made here


@dataclass(frozen=True)
class _HookChain:
    """"calls RunningNorm._save_to_state_dict() for each submodule of that class (nn.Module's
    state_dict()), which calls dist.all_reduce() (norm.py:41)", rendered when a message shows it."""

    call: str
    klass: str
    hook: str
    api: apis.Api

    def __str__(self) -> str:
        inner = self.api.via or self.api.inside
        return (f"calls {self.klass}.{self.hook}() for each submodule of that class (nn.Module's {self.call}(), "
                f"torch {_TORCH}), which {inner}")


@dataclass(frozen=True)
class _Construction:
    """A call of one of the module's classes, as calls_of hands its `__init__`'s callers on."""

    call: cst.Call
    scope: cst.CSTNode  # the function (or module) it is in
    klass: cst.ClassDef
    conditional: bool = False  # under an `if` (or a conditional expression)


class _ConstructionFinder(Visitor):
    def __init__(self, classes: dict[str, cst.ClassDef], module: cst.Module) -> None:
        self._classes = classes
        self._scopes: list[cst.CSTNode] = [module]
        self._conditions = 0  # the `if` statements and expressions around the node
        self.found: list[_Construction] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()

    def _enter_condition(self, node: cst.CSTNode) -> None:
        self._conditions += 1

    def _leave_condition(self, original_node: cst.CSTNode) -> None:
        self._conditions -= 1

    visit_If = visit_IfExp = _enter_condition
    leave_If = leave_IfExp = _leave_condition

    def visit_Call(self, node: cst.Call) -> None:
        klass = self._classes.get(node.func.value) if isinstance(node.func, cst.Name) else None
        if klass is not None:
            self.found.append(_Construction(node, self._scopes[-1], klass, self._conditions > 0))


_NESTED_METHODS = 3  # how deep _own_method_returns follows methods returning what other methods return


def _module_constants(module: cst.Module, assignments) -> dict[str, int]:
    """Names assigned once in the whole module, at its top level, an integer literal."""
    counts: dict[str, int] = {}
    for _, name, _ in assignments:
        counts[name] = counts.get(name, 0) + 1
    return {name: value for scope, name, value in assignments
            if scope is module and counts[name] == 1 and integer_literal(value) is not None
            for value in (integer_literal(value),)}


def _bound_once_at_top(module: cst.Module, assignments) -> Iterator[tuple[str, cst.BaseExpression]]:
    """(name, value) for the names assigned once in the whole module, at its top level."""
    counts: dict[str, int] = {}
    for _, name, _ in assignments:
        counts[name] = counts.get(name, 0) + 1
    return ((name, value) for scope, name, value in assignments if scope is module and counts[name] == 1)


def _literal_tables(module: cst.Module, assignments) -> dict[str, bool]:
    """Names assigned once in the whole module, at its top level, a dict, list or tuple literal
    -> whether its entries are literal sequences that are not all of one length."""
    return {name: len(set(_entry_lengths(value))) > 1 for name, value in _bound_once_at_top(module, assignments)
            if isinstance(value, (cst.Dict, cst.List, cst.Tuple))}


def _uniform_tables(module: cst.Module, assignments) -> frozenset[str]:
    """Names assigned once in the whole module, at its top level, a list or tuple of one literal
    repeated (`SHARD_ROWS = [8, 8, 8, 8]`): any entry of it is that literal."""
    return frozenset(name for name, value in _bound_once_at_top(module, assignments)
                     if isinstance(value, (cst.List, cst.Tuple)) and value.elements
                     and all(isinstance(element, cst.Element) and isinstance(element.value, (cst.Integer, cst.Float))
                             for element in value.elements)
                     and len({element.value.value for element in value.elements}) == 1)


def _uneven_item_tables(module: cst.Module, assignments) -> frozenset[str]:
    """Names assigned once in the whole module, at its top level, a literal table whose entries are
    sequences of sequences, and at some place the entries' items differ in length: each rank's own
    entry then hands it items of a length of its own (`for seq in SEQUENCES[rank]: if len(seq) > 6`)."""
    found = set()
    for name, value in _bound_once_at_top(module, assignments):
        entries = _table_entries(value)
        rows = [[_sequence_length(item.value) for item in entry.elements] for entry in entries
                if isinstance(entry, (cst.List, cst.Tuple))]
        if len(rows) < 2 or len(rows) != len(entries):
            continue
        places = zip(*rows)  # the entries' items at one place, as far as the shortest entry goes
        if any(None not in lengths and len(set(lengths)) > 1 for lengths in places):
            found.add(name)
    return frozenset(found)


def _sequence_length(item: cst.BaseExpression) -> Optional[int]:
    """How many items a list or tuple literal without starred items, `[... for i in range(N)]`, or
    such a literal repeated (`[8, 80] * 16`) holds; None for anything else."""
    if isinstance(item, (cst.List, cst.Tuple)) and not any(isinstance(e, cst.StarredElement) for e in item.elements):
        return len(item.elements)
    if isinstance(item, cst.BinaryOperation) and isinstance(item.operator, cst.Multiply):
        for items, times in ((item.left, item.right), (item.right, item.left)):
            count = _sequence_length(items) if isinstance(times, cst.Integer) else None
            if count is not None:
                return count * int(times.evaluated_value)
    if isinstance(item, cst.ListComp) and item.for_in.inner_for_in is None and not item.for_in.ifs:
        return _range_count(item.for_in.iter)
    return None


def _table_lengths(module: cst.Module, assignments) -> dict[str, int]:
    """Names assigned once in the whole module, at its top level, a list or tuple literal without
    starred items, or a list made from `range(N)` (`[f"img{i}" for i in range(9)]`) -> how many
    items it holds."""
    found = {}
    for name, value in _bound_once_at_top(module, assignments):
        count = _sequence_length(value)
        if count is not None:
            found[name] = count
    return found


def _range_count(expr: cst.BaseExpression) -> Optional[int]:
    """N for `range(N)` with N an integer literal."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "range" \
            and len(expr.args) == 1 and isinstance(expr.args[0].value, cst.Integer):
        return int(expr.args[0].value.evaluated_value)
    return None


# A top-level function without parameters (`def make_rows():`), from its text.
_PARAMETERLESS = re.compile(r"^def\s+\w+\s*\(\s*\)", re.MULTILINE)


def table_copies(statements: list, constants: dict) -> tuple[dict[str, str], dict[str, int]]:
    """Of the module's functions among `statements` (CPython's `ast`; the cut may have dropped
    them), those without parameters whose every return hands back one item per item of a
    module-level name (`return [torch.tensor(n) for n in LENGTHS]`, `return list(ROWS)`) -> that
    name: what they return holds as many items as the table. A function that copies a literal
    table of its own (`lengths = [12, 10, 8]`, then `return [make(n) for n in lengths]`, or
    `torch.full((VOCAB, VOCAB), x)` with VOCAB one of the module's integer `constants`) names it
    "function()", with its length in the second dictionary."""
    found, local_lengths = {}, {}
    for function in statements:
        if not isinstance(function, ast.FunctionDef) or function.args.args or function.args.vararg:
            continue
        tables = {_copied_table(node.value) for node in ast.walk(function) if isinstance(node, ast.Return)}
        if len(tables) != 1 or None in tables:
            continue
        table = tables.pop()
        count = _local_table_length(function, table, constants)
        if count is not None:
            table = f"{function.name}()"
            local_lengths[table] = count
        found[function.name] = table
    return found, local_lengths


def _local_table_length(function: ast.FunctionDef, name: str, constants: dict) -> Optional[int]:
    """How many items a list or tuple literal holds that `function` binds to `name` once, or how
    many rows a tensor it makes so has (`torch.full((VOCAB, VOCAB), -5.0)`), or None."""
    bindings = [node for node in ast.walk(function)
                if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.NamedExpr))
                and name in _ast_targets(node)]
    if len(bindings) != 1 or not isinstance(bindings[0], ast.Assign):
        return None
    value = bindings[0].value
    if isinstance(value, (ast.List, ast.Tuple)) and not any(isinstance(item, ast.Starred) for item in value.elts):
        return len(value.elts)
    return _rows_made(value, constants)


def _rows_made(value: ast.expr, constants: dict) -> Optional[int]:
    """N for `torch.zeros(N, ...)`, `torch.full((N, M), x)`, N a literal or a module constant."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.args
            and value.func.attr in ("zeros", "ones", "empty", "full", "rand", "randn")):
        return None
    size = value.args[0]
    first = size.elts[0] if isinstance(size, (ast.Tuple, ast.List)) and size.elts else size
    if isinstance(first, ast.Constant) and type(first.value) is int:
        return first.value
    return constants.get(first.id) if isinstance(first, ast.Name) else None


# `VOCAB = 16`, `VOCAB, DIM = 16, 8` at the start of a line: the module's integer constants.
_CONSTANT_LINE = re.compile(r"^([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=\s*(\d+(?:\s*,\s*\d+)*)\s*(?:#.*)?$",
                            re.MULTILINE)


def _constants_in(text: str) -> dict[str, int]:
    """The module's top-level names bound to integer literals, read from its text (a function
    summarised alone has no module of its own to read them from)."""
    found: dict[str, int] = {}
    for match in _CONSTANT_LINE.finditer(text):
        names, values = match.group(1).split(","), match.group(2).split(",")
        if len(names) == len(values):
            found.update({name.strip(): int(value) for name, value in zip(names, values)})
    return found


def _ast_targets(node: ast.AST) -> set:
    """The names an assignment, loop or `with` binds (not those of a subscript or attribute written)."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.With):
        targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
    else:
        targets = [node.target]
    names: set = set()
    while targets:
        target = targets.pop()
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            targets.extend(target.elts)
        elif isinstance(target, ast.Starred):
            targets.append(target.value)
    return names


def _copied_table(value: Optional[ast.expr]) -> Optional[str]:
    if isinstance(value, ast.ListComp) and len(value.generators) == 1 and not value.generators[0].ifs:
        value = value.generators[0].iter
    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("list", "tuple") \
            and len(value.args) == 1:
        value = value.args[0]
    return value.id if isinstance(value, ast.Name) else None


def _entry_lengths(table: cst.BaseExpression) -> list:
    """The lengths of a literal table's entries (a list, tuple or string literal each), or []."""
    entries = _table_entries(table)
    lengths = [len(entry.elements) if isinstance(entry, (cst.List, cst.Tuple)) else None for entry in entries]
    return lengths if None not in lengths else []


def _table_entries(table: cst.BaseExpression) -> list:
    """The entries of a dict, list or tuple literal (a dict's values), or []."""
    if isinstance(table, cst.Dict):
        return [element.value for element in table.elements if isinstance(element, cst.DictElement)]
    if isinstance(table, (cst.List, cst.Tuple)):
        return [element.value for element in table.elements]
    return []


def _constructions_in(value: cst.BaseExpression, depth: int = 0) -> Iterator[cst.Call]:
    """The constructions `value` is or holds as a container's items: `Norm(w)`, and those in
    `nn.Sequential(nn.Linear(...), Norm(w))`, `nn.ModuleList([Block() for _ in range(n)])`."""
    if not _constructs(value) or depth > 2:
        return
    yield value
    for arg in value.args:
        item = arg.value
        if isinstance(item, (cst.ListComp, cst.GeneratorExp)):
            item = item.elt
        elements = [element.value for element in item.elements] if isinstance(item, (cst.List, cst.Tuple)) else [item]
        for element in elements:
            yield from _constructions_in(element, depth + 1)


def _constructs(value: cst.BaseExpression) -> bool:
    """`MetricsTracker(...)`, `metrics.Tracker(...)`: a call of a capitalised name, a class."""
    return isinstance(value, cst.Call) and (last_name(value.func) or "")[:1].isupper()


def _constructs_by_name(value: cst.BaseExpression) -> bool:
    """`Tracker(...)`: a construction of a class named on its own (defined or imported here)."""
    return _constructs(value) and isinstance(value.func, cst.Name)


def _agreed(definitions) -> dict[str, cst.BaseExpression]:
    """name -> value for the names every definition gives the same value."""
    found: dict[str, list] = {}
    for name, value in definitions:
        found.setdefault(name, []).append(value)
    return {name: values[0] for name, values in found.items() if all(v.deep_equals(values[0]) for v in values)}


def _attribute_definitions(module: cst.Module, assignments) -> dict[str, cst.BaseExpression]:
    """The one value each attribute name is given in the module: by the single assignment
    `obj.x = value` (`cfg.should_log = accelerator.is_main_process and ...`) or by a property of
    a top-level class whose body is one `return` (a docstring aside). A name given two different
    values is left out: which object it belongs to is not known."""
    properties = [(member.name.value, returned)
                  for klass in module.body if isinstance(klass, cst.ClassDef)
                  for member in klass.body.body for returned in (_property_return(member),) if returned is not None]
    # A literal is a starting value (`self.pending = []`, later appended to), not a test it holds.
    return {name: value for name, value in _agreed([*assignments, *properties]).items()
            if not isinstance(value, _LITERALS) or (isinstance(value, cst.Name) and value.value not in _CONSTANTS)}


_LITERALS = (cst.List, cst.Dict, cst.Set, cst.Tuple, cst.Integer, cst.Float, cst.SimpleString, cst.Name)
_CONSTANTS = ("None", "True", "False")


def _property_return(member: cst.CSTNode) -> Optional[cst.BaseExpression]:
    if not isinstance(member, cst.FunctionDef) or not any(
            last_name(decorator.decorator) in ("property", "cached_property") for decorator in member.decorators):
        return None
    return single_return(member)


def single_return(function: cst.FunctionDef) -> Optional[cst.BaseExpression]:
    """What a function whose body is one `return` (a docstring aside) returns."""
    body = function.body.body
    if len(body) == 2 and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
            and isinstance(body[0].body[0].value, cst.SimpleString):
        body = body[1:]  # the docstring
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine):
        return None
    only = body[0].body[0]
    return only.value if isinstance(only, cst.Return) and only.value is not None else None


# Calls that return a deep copy of their first argument, or a module whose forward calls one
# (torch 2.13.0, optim/swa_utils.py AveragedModel: `self.module = deepcopy(model)`, forward calls it).
_COPIES_OF_THEIR_ARGUMENT = frozenset({"copy.deepcopy", "torch.optim.swa_utils.AveragedModel"})


# What iterating a prepared, shuffled DataLoader runs (accelerate 1.15.0, data_loader.py:579).
PREPARED_ITERATION = (f"runs synchronize_rng_states() of accelerate's prepared DataLoader inside, a broadcast "
                      f"of its shuffling generator (accelerate {_ACCELERATE})")


# The clock's readings (divergence._CLOCKS) by the names a method calls them with.
_CLOCK_READS = frozenset({"time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns"})


def _times_itself(method: cst.FunctionDef) -> bool:
    """Whether the method reads the clock (`time.monotonic()`): what it keeps of it is its process's."""
    return any(isinstance(call.func, cst.Attribute) and call.func.attr.value in _CLOCK_READS
               for call in every_call(method))


# How many assignments back a loss is followed to the forward pass it is computed from.
_LOSS_DEPTH = 5


def _weak(method: Callable) -> Callable:
    """`method`, holding its object weakly: the analysis owns its RankConditions, and a strong
    reference back made a cycle that kept the module's whole tree alive until the next full
    collection, which is rare while linting (engine.rare_garbage_collection)."""
    reference = weakref.WeakMethod(method)
    return lambda *args, **kwargs: reference()(*args, **kwargs)


def _attribute_keys(sites: list) -> set:
    """The `obj.attr` payloads ("self.weights") that the scope's broadcasts send."""
    return {attribute_key(node) for site in sites if site.api.is_broadcast and site.payload is not None
            for node in payload_attributes(site.payload, site.api.nested)}


def _calls_super(method: cst.FunctionDef) -> bool:
    """`super().__init__(...)` (or any `super()` call) in the method."""
    finder = _SuperCall()
    finder.walk(method)
    return finder.found


class _SuperCall(Visitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "super":
            self.found = True


def _assigns(method: cst.FunctionDef, keys: set) -> bool:
    """`self.x = ...` (or `self.x += ...`) for one of `keys` anywhere in `method`."""
    collector = _AttributeAssignments(keys)
    collector.walk(method)
    return collector.found


class _AttributeAssignments(Visitor):
    def __init__(self, keys: set) -> None:
        self._keys = keys
        self.found = False

    def _target(self, target: cst.CSTNode) -> None:
        if attribute_key(target) in self._keys:
            self.found = True

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target)
def _ancestors(site: CallSite, statements: tuple[cst.CSTNode, ...]) -> tuple[cst.CSTNode, ...]:
    inside = next((i + 1 for i, statement in enumerate(statements) if statement is site.scope), 0)
    outer = (site.scope, *statements[inside:])  # ends with site.statement
    path: list[cst.CSTNode] = []
    for node, inner in zip(outer, outer[1:]):
        path.extend(path_to(node, inner) or ())
    path.extend(path_to(site.statement, site.call, skip_suites=True) or ())
    return tuple(path)


def run_summaries(project: Project) -> Summaries:
    """The function summaries of the run `project` belongs to, kept on it. Each function is
    analysed alone by a ModuleAnalysis, which reads the summaries in turn: the summaries are
    handed the way to make one, rather than importing this module."""
    if project.summaries is None:
        project.summaries = Summaries(project, _analyse_function)
    return project.summaries


def _analyse_function(summaries: Summaries, module: cst.Module, path: str, source: Source,
                      index: ModuleIndex, klass: Optional[str]) -> ModuleAnalysis:
    return ModuleAnalysis(module, path, source, FileContext(summaries.project, summaries, index, klass, summary=True,
                                                            _memo=index.memo))

