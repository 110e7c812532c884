"""Generate bcast_lint/data/framework_map.json: the frameworks' public calls that may run a collective.

    python scripts/generate_framework_map.py [--corpus-dir benchmarks/.corpus] [--check]

Reads the pinned sources (torch from the installed package, the others fetched once with
`pip download --no-deps NAME==VERSION` into the git-ignored corpus directory, as
scripts/lint_real_world.py does) and computes, over all of them together, which functions may
run a collective: a call graph built with Python's `ast`, then a fixpoint from the seeds
(torch.distributed's and deepspeed.comm's collectives). The project's own summaries
(analysis.summaries) are not used: they resolve calls inside one user project through its import
index and judge rank conditions, while a framework reaches its collectives through typed attributes
(`self.strategy.barrier()`, declared `-> "pl.strategies.Strategy"`) and overridden methods
(a base class's `barrier` is abstract, DDPStrategy's runs one), which needs class-hierarchy
analysis across packages. The graph here resolves:

- `f(...)`, `module.f(...)`, `Class(...)` through each module's imports (re-exports and
  `from x import *` followed);
- `self.m(...)` and `super().m(...)`: the method found up the class's bases, and every override of
  it in the class's subclasses (the object may be one);
- `self.attr.m(...)`, `param.m(...)`, `local.m(...)`, `global.m(...)` where the receiver's class is
  written down: an annotation, a property's return annotation, or an assignment of a constructor;
- a method or function passed as a value (`self._collective_op(t, self._do_all_reduce)`) is taken as
  called there.

Hand-written entries (`HAND_WRITTEN`) cover what the graph cannot see (autograd Functions, hooks
that run later, C++); each names a line of the framework by its text, and the generator finds the
line number in the pinned source, failing when the text is gone. `--check` exits 1 when the shipped
map differs from what the sources give (tests/test_framework_map.py runs it).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "scripts"))
MAP_PATH = REPO_ROOT / "bcast_lint" / "data" / "framework_map.json"


@dataclass(frozen=True)
class Framework:
    name: str  # on PyPI
    version: str
    roots: tuple[str, ...]  # files and folders read, relative to the site-packages-like root
    public: tuple[str, ...]  # classes whose public methods and modules whose public functions are mapped


FRAMEWORKS = (
    Framework("torch", "2.13.0", ("torch/distributed", "torch/nn/parallel"), (
        "torch.distributed.checkpoint.state_dict", "torch.distributed.tensor._api.DTensor",
        "torch.nn.parallel.distributed.DistributedDataParallel",
        "torch.distributed.optim.zero_redundancy_optimizer.ZeroRedundancyOptimizer",
        "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel")),
    Framework("accelerate", "1.15.0", ("accelerate",), (
        "accelerate.accelerator.Accelerator", "accelerate.state.PartialState")),
    Framework("transformers", "5.25.0", (
        "transformers/trainer.py", "transformers/trainer_utils.py", "transformers/trainer_pt_utils.py",
        "transformers/trainer_callback.py", "transformers/training_args.py", "transformers/integrations",
        "transformers/utils/import_utils.py", "transformers/__init__.py"), (
        "transformers.trainer.Trainer",)),
    Framework("lightning", "2.6.6", ("lightning/pytorch", "lightning/fabric", "lightning/__init__.py"), (
        "lightning.pytorch.core.module.LightningModule", "lightning.pytorch.trainer.trainer.Trainer",
        "lightning.fabric.fabric.Fabric", "lightning.pytorch.strategies.strategy.Strategy",
        "lightning.fabric.strategies.strategy.Strategy")),
    Framework("deepspeed", "0.19.8", ("deepspeed/runtime", "deepspeed/comm", "deepspeed/__init__.py",
                                      "deepspeed/utils", "deepspeed/checkpoint"), (
        "deepspeed.runtime.engine.DeepSpeedEngine",)),
    # All of it: the metrics are Metric's subclasses, which keep its `compute` (see subclasses()).
    Framework("torchmetrics", "1.9.0", ("torchmetrics",), (
        "torchmetrics.metric.Metric", "torchmetrics.collections.MetricCollection", "torchmetrics.utilities.distributed",
        "torchmetrics.wrappers.tracker.MetricTracker")),
    Framework("pytorch-ignite", "0.5.5", ("ignite/distributed", "ignite/__init__.py"), (
        "ignite.distributed.utils", "ignite.distributed.comp_models.base.ComputationModel")),
    Framework("mmengine", "0.10.7", ("mmengine/dist", "mmengine/__init__.py"), (
        "mmengine.dist.dist", "mmengine.dist.utils")),
)

# The collectives every chain ends in; their own bodies are not read.
_C10D = ("broadcast", "broadcast_object_list", "all_reduce", "all_gather", "all_gather_into_tensor",
         "all_gather_object", "all_to_all", "all_to_all_single", "gather", "gather_object", "reduce",
         "reduce_scatter", "reduce_scatter_tensor", "scatter", "scatter_object_list", "barrier",
         "monitored_barrier", "new_group", "new_subgroups")
_FUNCOL = ("broadcast", "all_reduce", "all_gather_single", "all_gather_single_autograd", "reduce_scatter_single",
           "reduce_scatter_single_autograd", "all_gather_tensor", "all_gather_tensor_autograd",
           "reduce_scatter_tensor", "reduce_scatter_tensor_autograd", "all_reduce_coalesced",
           "all_to_all_single", "all_to_all_single_autograd")
SEEDS = frozenset(
    [f"{module}.{name}" for module in ("torch.distributed", "torch.distributed.distributed_c10d",
                                       "deepspeed.comm", "deepspeed.comm.comm") for name in _C10D]
    + [f"torch.distributed._functional_collectives.{name}" for name in _FUNCOL]
    # autograd-aware collectives (`torch.distributed.nn.functional.all_gather`)
    + [f"torch.distributed.nn.{module}{name}" for module in ("", "functional.") for name in _C10D])

# Setting up the process group runs once, on every rank, before the code the linter judges; the
# singletons that create it on first use (`PartialState()`) are read everywhere afterwards.
NOT_FOLLOWED = frozenset({
    "deepspeed.comm.comm.init_distributed", "torch.distributed.distributed_c10d.init_process_group",
})

# Where a call runs its collective only when the user passes an argument: (entry, keyword, text of
# the line that tests it). The graph finds that the entry may run one; this says when.
CONDITIONS = (
    ("torch.distributed.checkpoint.state_dict.get_model_state_dict", "full_state_dict",
     "if info.full_state_dict:"),
)


@dataclass(frozen=True)
class Hand:
    entry: str  # the qualified name of the public method or function
    kind: str
    inside: str  # what it runs, as a message names it
    evidence: tuple[tuple[str, str], ...]  # (file under the framework's root, text of the line)
    keyword: Optional[str] = None  # runs the collective only when this argument is passed (true)
    # ...or when this argument (keyword, position) is an object of this class, and then runs this instead,
    # proven by these lines: (keyword, position, class, inside, evidence)
    object_argument: Optional[tuple] = None


HAND_WRITTEN = (
    # LightningModule.log hands the value to the trainer's result collection with `sync_dist` and
    # `trainer.strategy.reduce` as the function to sync with; the collection calls it through a
    # stored `partial` when the value is logged on_step and when the epoch's value is computed.
    Hand("lightning.pytorch.core.module.LightningModule.log", "method", "strategy.reduce()", (
        ("lightning/pytorch/core/module.py", "sync_dist=sync_dist and trainer._accelerator_connector.is_distributed"),
        ("lightning/pytorch/core/module.py", "sync_dist_fn=trainer.strategy.reduce"),
        ("lightning/pytorch/trainer/connectors/logger_connector/result.py",
         "self._forward_cache = self.meta.sync(value.clone())"),
        ("lightning/pytorch/trainer/connectors/logger_connector/result.py",
         "value = self.meta.sync(self.value.clone())")), "sync_dist",
         # A torchmetrics Metric logged as the value is computed, and so synced, at the epoch's end, on
         # the processes that logged it, whatever `sync_dist` says.
         ("value", 1, "torchmetrics.metric.Metric", "the logged metric's compute()", (
             ("lightning/pytorch/trainer/connectors/logger_connector/result.py", "return self.value.compute()"),
             ("lightning/pytorch/trainer/connectors/logger_connector/result.py", "result_metric.compute()"),
             ("torchmetrics/metric.py", "self._sync_dist(dist_sync_fn, process_group=process_group)")))),
    Hand("lightning.pytorch.core.module.LightningModule.log_dict", "method", "strategy.reduce()", (
        ("lightning/pytorch/core/module.py", "sync_dist=sync_dist,"),
        ("lightning/pytorch/core/module.py", "sync_dist_fn=trainer.strategy.reduce")), "sync_dist"),
    # DTensor.full_tensor redistributes through an autograd Function, which the graph cannot follow.
    Hand("torch.distributed.tensor._api.DTensor.full_tensor", "method", "funcol.all_gather_single()", (
        ("torch/distributed/tensor/_api.py", "redist_res = self.redistribute("),
        ("torch/distributed/tensor/_redistribute.py", "output = redistribute_local_tensor("),
        ("torch/distributed/tensor/placement_types.py", "result = funcol.all_gather_single("))),
    # get_model_state_dict reads the model's state_dict through a function it looks up by name, then
    # gathers each sharded value when the options ask for a full state dict.
    Hand("torch.distributed.checkpoint.state_dict.get_model_state_dict", "function", "_gather_state_dict()", (
        ("torch/distributed/checkpoint/state_dict.py", "if info.full_state_dict:"),
        ("torch/distributed/checkpoint/state_dict.py", "return _gather_state_dict("),
        ("torch/distributed/_state_dict_utils.py", "output_tensor = _all_gather_sharded_tensor(value, pg, device)")),
        "full_state_dict"),
    # The model Accelerator.prepare returned is a DeepSpeed engine or an FSDP wrapper; its type is not
    # written down where get_state_dict calls it.
    Hand("accelerate.accelerator.Accelerator.get_state_dict", "method", "model._zero3_consolidated_16bit_state_dict()", (
        ("accelerate/accelerator.py", "else model._zero3_consolidated_16bit_state_dict()"),
        ("deepspeed/runtime/engine.py", "with deepspeed.zero.GatheredParameters(params_to_fetch, modifier_rank=0):"),
        ("accelerate/accelerator.py", "with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT"))),
    # The model Accelerator.prepare wrapped in DistributedDataParallel all-reduces its gradients in
    # autograd hooks that DDP's C++ reducer registers; `loss.backward()` runs them.
    Hand("accelerate.accelerator.Accelerator.backward", "method", "the gradient all_reduce() of DDP's reducer", (
        ("accelerate/accelerator.py", "loss.backward(**kwargs)"),
        ("accelerate/accelerator.py",
         "self.deepspeed_engine_wrapped.backward(loss, sync_gradients=self.sync_gradients, **kwargs)"),
        ("torch/nn/parallel/distributed.py", "self.reducer = dist.Reducer("))),
    # LocalSGD keeps the Accelerator it is handed in an attribute set under `if self.enabled:`, which
    # the graph does not type: `step()` averages the parameters every `local_sgd_steps` calls.
    Hand("accelerate.local_sgd.LocalSGD.step", "method", "accelerator.reduce() of the parameters", (
        ("accelerate/local_sgd.py", "if self.num_steps % self.local_sgd_steps == 0:"),
        ("accelerate/local_sgd.py", 'param.data = self.accelerator.reduce(param.data, reduction="mean")'))),
    # DeepSpeed's ZeRO optimizer is not typed on the engine.
    Hand("deepspeed.runtime.engine.DeepSpeedEngine.load_checkpoint", "method", "optimizer._restore_from_bit16_weights()", (
        ("deepspeed/runtime/engine.py", "self.optimizer._restore_from_bit16_weights()"),
        ("deepspeed/runtime/zero/stage_1_and_2.py", "self._restore_from_bit16_weights()"),
        ("deepspeed/runtime/engine.py", "dist.recv(tensor=load_serial, src=dist.get_rank() - 1)"))),
    # FSDP's forward unshards its flat parameter through the handle, whose class the graph does not
    # type: an all-gather of every rank's shard.
    Hand("torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel.forward", "method",
         "handle.unshard()", (
             ("torch/distributed/fsdp/fully_sharded_data_parallel.py", "args, kwargs = _pre_forward("),
             ("torch/distributed/fsdp/_runtime_utils.py",
              "_unshard(state, handle, state._unshard_stream, state._pre_unshard_stream)"),
             ("torch/distributed/fsdp/_runtime_utils.py", "handle.unshard()"),
             ("torch/distributed/fsdp/_flat_param.py",
              "padded_unsharded_flat_param = self._all_gather_flat_param(unsharded_flat_param)"))),
    # fully_shard (FSDP2) changes the module's class to an FSDPModule subclass and registers a forward
    # pre-hook that unshards the parameter group: an all-gather in every forward of the module.
    Hand("torch.distributed.fsdp._fully_shard._fully_shard.FSDPModule.forward", "method",
         "fsdp_param_group.unshard()", (
             ("torch/distributed/fsdp/_fully_shard/_fully_shard.py",
              "modules, cls_to_fsdp_cls, FSDPModule, \"FSDP\", _unimplemented_deepcopy"),
             ("torch/distributed/fsdp/_fully_shard/_fsdp_state.py",
              "self._pre_forward_hook_handle = modules[0].register_forward_pre_hook("),
             ("torch/distributed/fsdp/_fully_shard/_fsdp_state.py",
              "args, kwargs = fsdp_param_group.pre_forward(module, args, kwargs)"),
             ("torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py", "self._all_gather_result = foreach_all_gather("))),
    # FSDP registers state_dict hooks; under the default FULL_STATE_DICT the pre-hook unshards every
    # parameter (the same all-gather) before nn.Module.state_dict reads them.
    Hand("torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel.state_dict", "method",
         "_unshard_fsdp_state_params()", (
             ("torch/distributed/fsdp/_state_dict_utils.py", '("register_state_dict_pre_hook", _pre_state_dict_hook, {}),'),
             ("torch/distributed/fsdp/_state_dict_utils.py", "fsdp_state._unshard_params_ctx[module] = _unshard_fsdp_state_params("),
             ("torch/distributed/fsdp/_runtime_utils.py", "handle.unshard()"))),
    # MetricCollection.compute calls each member metric's compute, a Metric the graph does not type
    # (the members are the ModuleDict's values).
    Hand("torchmetrics.collections.MetricCollection.compute", "method", "each metric's compute() and its sync()", (
        ("torchmetrics/collections.py", 'return self._compute_and_reduce("compute")'),
        ("torchmetrics/collections.py", "res = m.compute()"),
        ("torchmetrics/metric.py", "self._sync_dist(dist_sync_fn, process_group=process_group)"))),
    # MetricTracker holds its metrics as items of a ModuleList: the graph cannot type `metric` there.
    Hand("torchmetrics.wrappers.tracker.MetricTracker.compute_all", "method",
         "each tracked metric's compute() and its sync()", (
        ("torchmetrics/wrappers/tracker.py", "res.append(metric.compute())"),
        ("torchmetrics/metric.py", "self._sync_dist(dist_sync_fn, process_group=process_group)"))),
    Hand("torchmetrics.wrappers.tracker.MetricTracker.best_metric", "method",
         "each tracked metric's compute() and its sync()", (
        ("torchmetrics/wrappers/tracker.py", "res = self.compute_all()"),
        ("torchmetrics/wrappers/tracker.py", "res.append(metric.compute())"),
        ("torchmetrics/metric.py", "self._sync_dist(dist_sync_fn, process_group=process_group)"))),
    Hand("torchmetrics.wrappers.tracker.MetricTracker.compute", "method", "the current metric's compute() and its sync()", (
        ("torchmetrics/wrappers/tracker.py", "return self[-1].compute()"),
        ("torchmetrics/metric.py", "self._sync_dist(dist_sync_fn, process_group=process_group)"))),
    # Metric.__init__ replaces `compute` with a wrapper that syncs the states first.
    Hand("torchmetrics.metric.Metric.compute", "method", "sync()", (
        ("torchmetrics/metric.py", "self.compute: Callable = self._wrap_compute(self.compute)"),
        ("torchmetrics/metric.py", "with self.sync_context("),
        ("torchmetrics/metric.py", "self._sync_dist(dist_sync_fn, process_group=process_group)"))),
)


# -- reading the sources -----------------------------------------------------------------------
@dataclass
class Function:
    key: str  # module.func or module.Class.meth
    node: ast.AST
    path: str  # relative to the framework's root, for evidence
    module: "Module"
    klass: Optional["Klass"] = None
    is_property: bool = False


@dataclass
class Klass:
    key: str
    module: "Module"
    node: ast.ClassDef
    bases: list[str] = field(default_factory=list)  # qualified, as written
    methods: dict[str, Function] = field(default_factory=dict)
    attributes: dict[str, ast.expr] = field(default_factory=dict)  # self.x: its class, as an expression


@dataclass
class Module:
    name: str
    path: str
    bindings: dict[str, str] = field(default_factory=dict)  # imported name -> qualified target
    stars: list[str] = field(default_factory=list)
    functions: dict[str, Function] = field(default_factory=dict)
    classes: dict[str, Klass] = field(default_factory=dict)
    globals: dict[str, ast.expr] = field(default_factory=dict)  # module variable -> its class expression
    reassigned: set[str] = field(default_factory=set)  # module variables a function rebinds (`global _model`)
    is_package: bool = False


def _module_name(relative: Path) -> tuple[str, bool]:
    parts = list(relative.with_suffix("").parts)
    package = parts[-1] == "__init__"
    if package:
        parts.pop()
    return ".".join(parts), package


def _absolute(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.name.split(".")
    if not module.is_package:
        base.pop()
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _read_module(root: Path, file: Path, framework_root: Path) -> Module:
    name, package = _module_name(file.relative_to(root))
    module = Module(name, str(file.relative_to(framework_root)), is_package=package)
    tree = ast.parse(file.read_bytes())
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            module.reassigned.update(node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    module.bindings[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    module.bindings.setdefault(top, top)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            for alias in node.names:
                if alias.name == "*":
                    module.stars.append(source)
                else:
                    module.bindings.setdefault(alias.asname or alias.name, f"{source}.{alias.name}")
    for node in _top_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            module.functions[node.name] = Function(f"{name}.{node.name}", node, module.path, module)
        elif isinstance(node, ast.ClassDef):
            module.classes[node.name] = _read_class(module, node)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call):
            module.globals[node.targets[0].id] = node.value.func
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            module.globals[node.target.id] = node.annotation
    return module


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, those under `if has_native_dist_support:` or `try:` included."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _top_level(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_level(node.body + node.orelse + [s for h in node.handlers for s in h.body])
        else:
            yield node


def _read_class(module: Module, node: ast.ClassDef) -> Klass:
    klass = Klass(f"{module.name}.{node.name}", module, node)
    klass.bases = [ast.unparse(base) for base in node.bases]
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            is_property = any(ast.unparse(d) in ("property", "cached_property", "functools.cached_property")
                              for d in item.decorator_list)
            klass.methods.setdefault(item.name, Function(f"{klass.key}.{item.name}", item, module.path, module,
                                                         klass, is_property))
            if is_property and item.returns is not None:
                klass.attributes.setdefault(item.name, item.returns)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            klass.attributes.setdefault(item.target.id, item.annotation)
    for item in ast.walk(node):
        if isinstance(item, ast.AnnAssign) and _self_attribute(item.target):
            klass.attributes.setdefault(item.target.attr, item.annotation)
        elif isinstance(item, ast.Assign) and isinstance(item.value, ast.Call):
            for target in item.targets:
                if _self_attribute(target):
                    klass.attributes.setdefault(target.attr, item.value.func)
    return klass


def _self_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


class Index:
    """Every module read, and the classes' subclasses, to resolve names and overrides."""

    def __init__(self) -> None:
        self.modules: dict[str, Module] = {}
        self.subclasses: dict[str, list[Klass]] = {}
        self.framework_of: dict[str, Framework] = {}
        self._resolved: dict[str, object] = {}

    def add(self, framework: Framework, root: Path) -> None:
        for relative in framework.roots:
            path = root / relative
            files = [path] if path.is_file() else sorted(path.rglob("*.py"))
            for file in files:
                if "demos" in file.parts:  # examples, not the framework
                    continue
                try:
                    module = _read_module(root, file, root)
                except (SyntaxError, UnicodeDecodeError, ValueError):
                    continue
                self.modules[module.name] = module
                self.framework_of[module.name] = framework

    def link(self) -> None:
        for module in self.modules.values():
            for klass in module.classes.values():
                for base in klass.bases:
                    resolved = self.resolve_expression(module, base)
                    if isinstance(resolved, Klass):
                        self.subclasses.setdefault(resolved.key, []).append(klass)

    def resolve(self, qualified: str, depth: int = 0):
        """The Function or Klass a qualified name is, following re-exports; a str for a seed; None."""
        if qualified in SEEDS:
            return qualified
        if qualified in self._resolved or depth > 6 or qualified.count(".") > 8:
            return self._resolved.get(qualified)
        self._resolved[qualified] = None  # in progress: a cycle of re-exports resolves to nothing
        self._resolved[qualified] = found = self._resolve(qualified, depth)
        return found

    def _resolve(self, qualified: str, depth: int):
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = self.modules.get(".".join(parts[:cut]))
            if module is not None:
                return self._in_module(module, parts[cut:], depth)
        return None

    def _in_module(self, module: Module, rest: list[str], depth: int):
        head, tail = rest[0], rest[1:]
        if f"{module.name}.{head}" in SEEDS and not tail:
            return f"{module.name}.{head}"
        if head in module.functions and not tail:
            return module.functions[head]
        if head in module.classes:
            klass = module.classes[head]
            if not tail:
                return klass
            return self.method(klass, tail[0]) if len(tail) == 1 else None
        if head in module.bindings:
            return self.resolve(".".join([module.bindings[head], *tail]), depth + 1)
        for star in module.stars:
            found = self.resolve(".".join([star, *rest]), depth + 1)
            if found is not None:
                return found
        return None

    def resolve_expression(self, module: Module, text: str):
        """A dotted name (or a string annotation) as written in `module`."""
        text = text.strip().strip("'\"")
        if text.startswith("Optional[") and text.endswith("]"):
            text = text[len("Optional["):-1]
        if not all(part.isidentifier() for part in text.split(".")):
            return None
        head, _, rest = text.partition(".")
        if head in module.classes and not rest:
            return module.classes[head]
        if head in module.functions and not rest:
            return module.functions[head]
        if head in module.bindings:
            return self.resolve(module.bindings[head] + ("." + rest if rest else ""))
        for star in module.stars:
            found = self.resolve(f"{star}.{text}")
            if found is not None:
                return found
        return None

    def mro(self, klass: Klass, seen=None) -> Iterator[Klass]:
        seen = set() if seen is None else seen
        if klass.key in seen:
            return
        seen.add(klass.key)
        yield klass
        for base in klass.bases:
            resolved = self.resolve_expression(klass.module, base)
            if isinstance(resolved, Klass):
                yield from self.mro(resolved, seen)

    def method(self, klass: Klass, name: str) -> Optional[Function]:
        return next((k.methods[name] for k in self.mro(klass) if name in k.methods), None)

    def dispatch(self, klass: Klass, name: str) -> list[Function]:
        """The method `name` an instance of `klass` (or of a subclass) may run."""
        found = [self.method(klass, name)]
        stack, seen = [klass], set()
        while stack:
            current = stack.pop()
            for sub in self.subclasses.get(current.key, ()):
                if sub.key not in seen:
                    seen.add(sub.key)
                    found.append(sub.methods.get(name))
                    stack.append(sub)
        return [f for f in found if f is not None]

    def attribute_class(self, klass: Klass, name: str) -> Optional[Klass]:
        for owner in self.mro(klass):
            if name in owner.attributes:
                resolved = self.resolve_expression(owner.module, ast.unparse(owner.attributes[name]))
                return resolved if isinstance(resolved, Klass) else None
        return None


# -- the call graph --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Edge:
    line: int
    text: str  # the callee as written, `self.strategy.barrier`
    targets: tuple  # Functions and seed names
    guards: tuple[str, ...]  # the tests of the `if`s whose true branch holds the call


def edges(index: Index, function: Function) -> list[Edge]:
    locals_ = _local_classes(index, function)
    found = []
    called = set()
    for node, guards in _walk(function.node, ()):
        if isinstance(node, ast.Call):
            called.add(id(node.func))
            targets = _call_targets(index, function, node.func, locals_)
            if targets:
                found.append(Edge(node.lineno, ast.unparse(node.func), tuple(targets), guards))
        elif isinstance(node, (ast.Attribute, ast.Name)) and isinstance(node.ctx, ast.Load) \
                and id(node) not in called:
            passed = _reference_targets(index, function, node, locals_)
            if passed:
                found.append(Edge(node.lineno, ast.unparse(node), tuple(passed), guards))
    return [edge for edge in found if not any(_not_followed(t) for t in edge.targets)]


def _not_followed(target) -> bool:
    return not isinstance(target, str) and target.key in NOT_FOLLOWED


def _walk(node: ast.AST, guards: tuple) -> Iterator[tuple[ast.AST, tuple]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If):
            yield from _walk(child.test, guards)
            test = ast.unparse(child.test)
            for statement in child.body:
                yield statement, (*guards, test)
                yield from _walk(statement, (*guards, test))
            for statement in child.orelse:
                yield statement, (*guards, f"not ({test})")
                yield from _walk(statement, (*guards, f"not ({test})"))
        else:
            yield child, guards
            yield from _walk(child, guards)


def _local_classes(index: Index, function: Function) -> dict[str, Klass]:
    """Parameters and local variables whose class is written down."""
    found = {}
    arguments = function.node.args
    for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
        if argument.annotation is not None:
            resolved = index.resolve_expression(function.module, ast.unparse(argument.annotation))
            if isinstance(resolved, Klass):
                found[argument.arg] = resolved
    for node in ast.walk(function.node):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            resolved = index.resolve_expression(function.module, ast.unparse(node.value.func))
            if isinstance(resolved, Klass):
                found.setdefault(node.targets[0].id, resolved)
    return found


def _call_targets(index: Index, function: Function, func: ast.expr, locals_: dict) -> list:
    module, klass = function.module, function.klass
    if isinstance(func, ast.Attribute):
        receiver = func.value
        if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls") and klass is not None:
            return index.dispatch(klass, func.attr)
        if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super" \
                and klass is not None:
            bases = list(index.mro(klass))[1:]
            return next(([k.methods[func.attr]] for k in bases if func.attr in k.methods), [])
        owner = _receiver_class(index, function, receiver, locals_)
        if owner is not None:
            return index.dispatch(owner, func.attr)
    resolved = index.resolve_expression(module, ast.unparse(func)) if _dotted(func) else None
    if isinstance(resolved, Klass):
        init = index.method(resolved, "__init__")
        return [init] if init is not None else []
    return [resolved] if resolved is not None else []


def _receiver_class(index: Index, function: Function, receiver: ast.expr, locals_: dict) -> Optional[Klass]:
    if isinstance(receiver, ast.Call) and _dotted(receiver.func):  # `PartialState().wait_for_everyone()`
        resolved = index.resolve_expression(function.module, ast.unparse(receiver.func))
        return resolved if isinstance(resolved, Klass) else None
    if isinstance(receiver, ast.Name):
        if receiver.id in locals_:
            return locals_[receiver.id]
        return global_class(index, function.module, receiver.id)
    if _self_attribute(receiver) and function.klass is not None:
        return index.attribute_class(function.klass, receiver.attr)
    if isinstance(receiver, ast.Attribute):
        owner = _receiver_class(index, function, receiver.value, locals_)
        return index.attribute_class(owner, receiver.attr) if owner is not None else None
    return None


def global_class(index: Index, module: Module, name: str) -> Optional[Klass]:
    """The class of a module variable's value, written down where it is assigned."""
    if name not in module.globals:
        return None
    resolved = index.resolve_expression(module, ast.unparse(module.globals[name]))
    if isinstance(resolved, Klass) and name in module.reassigned:
        return list(index.mro(resolved))[-1]  # rebound at run time: any class of the hierarchy
    return resolved if isinstance(resolved, Klass) else None


def _reference_targets(index: Index, function: Function, node: ast.expr, locals_: dict) -> list:
    """A method or function used as a value (`self._collective_op(t, self._do_all_reduce)`, `all_gather =
    self.trainer.strategy.all_gather`, a parameter's default), taken as called where it is named."""
    if isinstance(node, ast.Attribute):
        owner = function.klass if isinstance(node.value, ast.Name) and node.value.id == "self" \
            else _receiver_class(index, function, node.value, locals_)
        if owner is not None:
            return index.dispatch(owner, node.attr)  # a property's getter runs where it is read
    if not _dotted(node) or (isinstance(node, ast.Name) and node.id in locals_):
        return []
    resolved = index.resolve_expression(function.module, ast.unparse(node))
    return [resolved] if isinstance(resolved, (Function, str)) else []


def _dotted(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def fixpoint(index: Index, functions: list[Function]) -> dict[str, Edge]:
    """For each function that may run a collective, the edge that starts its shortest chain to one.
    A hand-written entry is a seed: its own edge names the line that proves it."""
    graph = {f.key: edges(index, f) for f in functions}
    proof: dict[str, Edge] = {}
    depth: dict[str, int] = {}
    for hand in HAND_WRITTEN:
        # as long as its evidence: a chain through it is no shorter than the hops it names
        proof[hand.entry] = Edge(0, hand.inside.removesuffix("()"), (hand.entry,), ())
        depth[hand.entry] = len(hand.evidence)
    changed = True
    while changed:
        changed = False
        for key, out in graph.items():
            for edge in out:
                reach = min((1 if isinstance(t, str) else depth.get(t.key, 10**6) + 1 for t in edge.targets))
                # the shortest chain; between equals, the first call in the source
                if reach < 10**6 and (reach, edge.line) < (depth.get(key, 10**6), getattr(proof.get(key), "line", 0)):
                    depth[key], proof[key] = reach, edge
                    changed = True
    return proof


def all_functions(index: Index) -> list[Function]:
    found = []
    for module in index.modules.values():
        found.extend(module.functions.values())
        for klass in module.classes.values():
            found.extend(klass.methods.values())
    return found


# -- the map ---------------------------------------------------------------------------------------
def chain(index: Index, key: str, proof: dict[str, Edge], functions: dict[str, Function]) -> list[str]:
    hops, seen = [], set()
    while key in proof and key not in seen:
        seen.add(key)
        edge, function = proof[key], functions[key]
        if edge.line == 0:  # a hand-written entry: its evidence
            hops.append(f"{key}: hand-written, see its entry")
            break
        hops.append(f"{function.path}:{edge.line} {edge.text}()")
        nxt = next((t for t in edge.targets if isinstance(t, str)), None)
        if nxt is not None:
            break
        key = min((t.key for t in edge.targets if t.key in proof), key=lambda k: _length(proof, k))
    return hops


def _length(proof: dict[str, Edge], key: str) -> int:
    length, seen = 0, set()
    while key in proof and key not in seen:
        seen.add(key)
        length += 1
        targets = proof[key].targets
        if any(isinstance(t, str) for t in targets):
            break
        key = next(t.key for t in targets if t.key in proof)
    return length


def _inside(edge: Edge) -> str:
    text = edge.text.removeprefix("self.").lstrip("_")
    return f"{text}()"


def public_entries(index: Index, framework: Framework, proof, functions) -> list[dict]:
    entries = []
    for name in framework.public:
        resolved = index.resolve(name)
        if isinstance(resolved, Klass):
            members = [index.method(resolved, m) for k in index.mro(resolved) for m in k.methods]
            owner = resolved.key
        elif name in index.modules:
            members = list(index.modules[name].functions.values())
            owner = None
        else:
            raise SystemExit(f"{framework.name}: {name} is not in the pinned sources")
        seen = set()
        for member in members:
            short = member.key.rsplit(".", 1)[-1]
            if short in seen or short.startswith("_"):
                continue
            seen.add(short)
            runs = member if member.key in proof or owner is None else next(
                (f for f in index.dispatch(resolved, short) if f.key in proof), None)
            if runs is not None and runs.key in proof:
                entries.append(_entry(index, framework, owner, member, runs, proof, functions))
    return entries


def _entry(index, framework, owner, member: Function, runs: Function, proof, functions) -> dict:
    """`runs`: the method that runs the collective, `member` itself or an override in a subclass."""
    short = member.key.rsplit(".", 1)[-1]
    entry = {
        "framework": framework.name,
        "name": f"{owner}.{short}" if owner else member.key,
        "kind": "property" if member.is_property else ("method" if owner else "function"),
        "inside": _inside(proof[runs.key]),
        "chain": chain(index, runs.key, proof, functions),
    }
    for qualified, keyword, text in CONDITIONS:
        if qualified == entry["name"]:
            entry["when"] = keyword
            entry["chain"].insert(0, _evidence(index, framework, member.path, text))
    return entry


def _evidence(index: Index, framework: Framework, path: str, text: str) -> str:
    """`path:line text`; `path` may be in another framework's sources (accelerate calls deepspeed)."""
    root = next((r for r in (_roots[framework.name], *_roots.values()) if (r / path).is_file()), None)
    if root is None:
        raise SystemExit(f"{framework.name} {framework.version}: {path} is not in the pinned sources")
    lines = (root / path).read_text().splitlines()
    for number, line in enumerate(lines, 1):
        if text in line:
            return f"{path}:{number} {line.strip()}"
    raise SystemExit(f"{framework.name} {framework.version}: `{text}` is no longer in {path}")


def hand_written(index: Index) -> list[dict]:
    entries = []
    for hand in HAND_WRITTEN:
        framework = index.framework_of[next(m for m in index.modules if hand.entry.startswith(m + "."))]
        entry = {"framework": framework.name, "name": hand.entry, "kind": hand.kind, "inside": hand.inside,
                 "chain": [_evidence(index, framework, path, text) for path, text in hand.evidence],
                 "hand_written": True}
        if hand.keyword:
            entry["when"] = hand.keyword
        if hand.object_argument:
            keyword, position, klass, inside, evidence = hand.object_argument
            entry["when_object"] = {"keyword": keyword, "position": position, "class": klass, "inside": inside,
                                    "chain": [_evidence(index, framework, path, text) for path, text in evidence]}
        entries.append(entry)
    return entries


# Methods whose overrides keep the collective: Metric.__init__ wraps `compute` whatever a subclass
# writes, and every metric's own `plot` computes through that wrapped `compute` (`self._plot(val)`
# calls `self.compute()` when given no value).
WRAPPED_OVERRIDES = {"torchmetrics.metric.Metric": {"compute", "plot"}}


def subclasses(index: Index, methods: dict[str, set[str]]) -> dict[str, str]:
    """The public subclasses of the mapped classes that override none of their mapped methods
    (`torchmetrics.classification.accuracy.MulticlassAccuracy` runs `Metric.compute` as is), each
    with the mapped class whose entries they share. A subclass that overrides one is left out: its
    override may run no collective (a single-device strategy's `barrier`)."""
    found: dict[str, str] = {}
    for owner, mapped in methods.items():
        waiting = [(sub, frozenset()) for sub in index.subclasses.get(owner, ())]
        while waiting:
            klass, overridden = waiting.pop()
            overridden = overridden | ((mapped - WRAPPED_OVERRIDES.get(owner, set())) & set(klass.methods))
            public = not any(part.startswith("_") for part in klass.key.split("."))
            if not overridden and public and klass.key not in methods:
                found.setdefault(klass.key, owner)
            waiting.extend((sub, overridden) for sub in index.subclasses.get(klass.key, ()))
    return dict(sorted(found.items()))


def hook_subclasses(index: Index, hook_classes: tuple[str, ...], methods: dict[str, set[str]]) -> dict[str, str]:
    """The public subclasses of the hook classes (`BasePredictionWriter` of `Callback`), each with its
    hook class: the framework calls their hooks with the same parameters. A mapped class and what
    derives from it keep their own entries."""
    found: dict[str, str] = {}
    for owner in hook_classes:
        waiting = list(index.subclasses.get(owner, ()))
        while waiting:
            klass = waiting.pop()
            if klass.key in methods:
                continue
            if not any(part.startswith("_") for part in klass.key.split(".")):
                found.setdefault(klass.key, owner)
            waiting.extend(index.subclasses.get(klass.key, ()))
    return found


def aliases(index: Index, names: set[str]) -> dict[str, str]:
    """Public re-exports (`lightning.Trainer`, `ignite.distributed.all_reduce`) of the mapped classes
    and functions: alias -> the name the map uses."""
    found = {}
    for module in index.modules.values():
        if not module.is_package:
            continue
        exported = set(module.bindings) | set(module.classes) | set(module.functions)
        for star in module.stars:
            star_module = index.modules.get(star)
            if star_module is not None:
                exported |= {n for n in (*star_module.functions, *star_module.classes, *star_module.bindings)}
        for name in exported:
            if name.startswith("_"):
                continue
            resolved = index.resolve(f"{module.name}.{name}")
            key = getattr(resolved, "key", None)
            if key in names and f"{module.name}.{name}" != key:
                found[f"{module.name}.{name}"] = key
    return dict(sorted(found.items()))


def handed(index: Index, classes: set[str]) -> dict[str, dict[str, str]]:
    """What a mapped class hands the user: its attributes and properties whose class is mapped
    (`LightningModule.trainer` -> Trainer), and the parameters of its hooks (`Callback.on_validation_end
    (self, trainer, pl_module)`), by name."""
    found = {}
    for key in sorted(classes):
        klass = index.resolve(key)
        attributes = {}
        for owner in index.mro(klass):
            for name in owner.attributes:
                target = index.attribute_class(klass, name)
                if target is not None and target.key in classes and not name.startswith("_"):
                    attributes.setdefault(name, target.key)
        if attributes:
            found[key] = dict(sorted(attributes.items()))
    return found


def hook_parameters(index: Index, hook_classes: tuple[str, ...], classes: set[str]) -> dict[str, dict[str, str]]:
    found = {}
    for key in hook_classes:
        klass = index.resolve(key)
        parameters = {}
        for method in klass.methods.values():
            for argument in method.node.args.args[1:]:
                if argument.annotation is None:
                    continue
                target = index.resolve_expression(method.module, ast.unparse(argument.annotation))
                if isinstance(target, Klass):
                    mapped = next((k.key for k in index.mro(target) if k.key in classes), None)
                    if mapped is not None:
                        parameters.setdefault(argument.arg, mapped)
        found[key] = dict(sorted(parameters.items()))
    return found


def instances(index: Index, classes: set[str]) -> dict[str, str]:
    """The frameworks' module variables, rebound at run time, that hold a mapped class's instance
    (`ignite.distributed.utils._model`, any computation model), by qualified name: where the module
    calls their methods, its assignments do not say what they hold."""
    found = {}
    for module in index.modules.values():
        for name in module.globals.keys() & module.reassigned:
            klass = global_class(index, module, name)
            if klass is not None and klass.key in classes:
                found[f"{module.name}.{name}"] = klass.key
    return dict(sorted(found.items()))


HOOK_CLASSES = ("lightning.pytorch.callbacks.callback.Callback", "lightning.fabric.fabric.Fabric")
_roots: dict[str, Path] = {}


def framework_root(framework: Framework, corpus_dir: Path) -> Path:
    if framework.name == "torch":
        import torch

        if torch.__version__.split("+")[0] != framework.version:
            raise SystemExit(f"torch {framework.version} is pinned; {torch.__version__} is installed")
        return Path(torch.__file__).parent.parent
    from lint_real_world import fetch_library

    # A folder of its own: the wheel's layout (`accelerate/...`), apart from the benchmark's sdists.
    return fetch_library(corpus_dir / "frameworks", framework.name, framework.version)


def build(corpus_dir: Path) -> dict:
    index = Index()
    for framework in FRAMEWORKS:
        _roots[framework.name] = framework_root(framework, corpus_dir)
        index.add(framework, _roots[framework.name])
    index.link()
    functions = all_functions(index)
    by_key = {f.key: f for f in functions}
    proof = fixpoint(index, functions)
    entries = {}
    for framework in FRAMEWORKS:
        for entry in public_entries(index, framework, proof, by_key):
            entries[entry["name"]] = entry
    for entry in hand_written(index):
        entries[entry["name"]] = entry
    classes = {e["name"].rsplit(".", 1)[0] for e in entries.values() if e["kind"] != "function"}
    methods = {klass: {e["name"].rsplit(".", 1)[1] for e in entries.values()
                       if e["kind"] != "function" and e["name"].rsplit(".", 1)[0] == klass} for klass in classes}
    inherited = subclasses(index, methods)
    inherited = dict(sorted({**hook_subclasses(index, HOOK_CLASSES, methods), **inherited}.items()))
    names = set(entries) | classes | set(inherited) | set(HOOK_CLASSES)  # `L.Callback` is a hook class
    return {
        "generated_by": "scripts/generate_framework_map.py",
        "versions": {f.name: f.version for f in FRAMEWORKS},
        "entries": [entries[name] for name in sorted(entries)],
        "aliases": aliases(index, names),
        "subclasses": inherited,
        "attributes": handed(index, classes),
        "hook_parameters": hook_parameters(index, HOOK_CLASSES, classes),
        "instances": instances(index, classes),
    }


def render(data: dict) -> str:
    return json.dumps(data, indent=1, sort_keys=False) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus-dir", type=Path, default=REPO_ROOT / "benchmarks" / ".corpus")
    parser.add_argument("--check", action="store_true", help="exit 1 when the shipped map is out of date")
    parser.add_argument("--output", type=Path, default=MAP_PATH)
    args = parser.parse_args(argv)
    text = render(build(args.corpus_dir))
    if args.check:
        if args.output.read_text() != text:
            print(f"{args.output} is out of date: run scripts/generate_framework_map.py", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
