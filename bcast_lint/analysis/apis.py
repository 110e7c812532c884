"""The distributed APIs bcast-lint knows, by fully qualified name.

A call is matched by the qualified name its imports give it (analysis.names), so aliases
(`import torch.distributed as dist`, `from accelerate.utils import broadcast as bc`) are the same
API and a local function that happens to be called `broadcast` is not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from bcast_lint.analysis import frameworks

TENSOR = "tensor"  # broadcasts a tensor (or, for accelerate, a nested structure of tensors)
OBJECTS = "objects"  # broadcasts a list of picklable objects, filled in place
OTHER = "other"  # any other collective: only where it runs matters
HIDDEN = "hidden"  # a framework call that runs collectives inside it (BCL011)


@dataclass(frozen=True)
class Api:
    qualified_name: str
    payload: str  # TENSOR, OBJECTS or OTHER
    src_keyword: str | None = None  # the parameter naming the source rank
    src_position: int | None = None
    default_src: int | None = None
    returns_none: bool = False  # torch.distributed returns None (a Work handle with async_op=True)
    in_place: bool = True  # the argument itself receives the value
    nested: bool = False  # walks lists, tuples and dicts and broadcasts each tensor leaf
    # What it runs inside: for HIDDEN, which collectives and in which configuration; for a hook
    # registration, the hook and its collective (hooks.HookChain).
    inside: object = None
    # A project function that broadcasts one of its parameters (analysis.summaries): where that
    # parameter is at the call, and what the function calls ("calls dist.broadcast() (comm.py:4)").
    payload_position: int | None = 0
    payload_keyword: str | None = None
    via: object = ""  # a str, or summaries.CallChain, which str() renders when a message shows it
    group_position: int | None = None  # where `group` may be passed positionally
    # A project function that returns before its collective when a test on a parameter holds
    # (`if not metrics: return {}`): (parameter, its position at a call or None, the test's code).
    returns_early_on: tuple = ()
    # A project function whose work on a parameter can raise (analysis.raising): (parameter, its
    # position at a call or None) for such work anywhere (None: not known), and before its collective.
    fails_on: tuple | None = None
    fails_before: tuple = ()
    receiver: str = ""  # HIDDEN: the object a framework method was called on, as the code names it
    # A project function under a memoising decorator (`@functools.lru_cache`): its body, and so its
    # collective, runs only for arguments it has not seen before.
    memoised: str = ""
    # A call that runs its collective only on the first of a run of such calls, and why: DDP's forward
    # under `torch.no_grad()` broadcasts the buffers only after a forward with grad (a loop runs it once).
    first_call_only: str = ""
    read: bool = False  # a property, read rather than called (`trainer.log_dir`)
    # A decision the framework acts on rather than a call: setting a TrainerControl flag, returning
    # None from `prediction_step`. Its verb ("is set"): messages say where it happens.
    steers: str = ""

    @property
    def short_name(self) -> str:
        return self.qualified_name.rsplit(".", 1)[-1]

    @property
    def called(self) -> str:
        """How a message names the call: `all_reduce()`, or for a framework call, with the object it
        was called on and what it runs inside (`trainer.save_checkpoint(), which runs strategy.barrier()
        inside (lightning 2.6.6),`)."""
        parentheses = "" if self.read else "()"
        if self.inside is None and self.read and self.receiver:
            return f"{self.receiver}.{self.short_name}"  # a property of the project's own class, read
        if self.inside is None:
            return f"{self.short_name}{parentheses}"
        name = f"{self.receiver}.{self.short_name}" if self.receiver else self.short_name
        return f"{name}{parentheses}, which {self.inside},"

    @property
    def is_broadcast(self) -> bool:
        return self.payload in (TENSOR, OBJECTS)


def _torch_style(module: str, name: str, payload: str) -> Api:
    return Api(f"{module}.{name}", payload, "src", 1, None, returns_none=True,
               group_position=TORCH_GROUP_POSITIONS[name])


def _accelerate_style(module: str, name: str, payload: str) -> Api:
    return Api(f"{module}.{name}", payload, "from_process", 1, 0, nested=payload == TENSOR)


TORCH_MODULES = ("torch.distributed", "torch.distributed.distributed_c10d", "deepspeed.comm")
_ACCELERATE_MODULES = ("accelerate.utils", "accelerate.utils.operations")
_OTHER_TORCH_COLLECTIVES = (
    "all_reduce", "all_gather", "all_gather_into_tensor", "all_gather_object", "all_to_all", "all_to_all_single",
    "gather", "gather_object", "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter",
    "scatter_object_list", "barrier", "monitored_barrier",
)
# Where each torch.distributed collective takes `group` positionally (torch 2.x signatures; a
# test compares them with the installed torch): `all_reduce(t, op, group)`, `barrier(group)`.
TORCH_GROUP_POSITIONS = {
    "broadcast": 2, "broadcast_object_list": 2, "all_reduce": 2, "all_gather": 2, "all_gather_into_tensor": 2,
    "all_gather_object": 2, "all_to_all": 2, "all_to_all_single": 4, "gather": 3, "gather_object": 3, "reduce": 3,
    "reduce_scatter": 3, "reduce_scatter_tensor": 3, "scatter": 3, "scatter_object_list": 3,
    "barrier": 0, "monitored_barrier": 0,
}
# The collectives rooted at one rank, and where they take it (torch 2.x signatures, 0 when not
# given): every rank must name the same root.
TORCH_ROOTS = {"gather": ("dst", 2), "gather_object": ("dst", 2), "reduce": ("dst", 1), "scatter": ("src", 2),
               "scatter_object_list": ("src", 2)}
_GROUP_MAKERS = ("new_group", "new_subgroups", "new_subgroups_by_enumeration")
_OTHER_ACCELERATE_COLLECTIVES = ("gather", "gather_object", "reduce", "pad_across_processes")


def _build_catalog() -> dict[str, Api]:
    apis = []
    for module in TORCH_MODULES:
        apis.append(_torch_style(module, "broadcast", TENSOR))
        apis.append(_torch_style(module, "broadcast_object_list", OBJECTS))
        apis.extend(Api(f"{module}.{name}", OTHER, *TORCH_ROOTS.get(name, (None, None)),
                        0 if name in TORCH_ROOTS else None, group_position=TORCH_GROUP_POSITIONS[name])
                    for name in _OTHER_TORCH_COLLECTIVES)
        # Every process of the job must enter these, as torch documents (groups are numbered by each
        # process's count of calls, so a process that skips one names every later group differently).
        apis.extend(Api(f"{module}.{name}", OTHER) for name in _GROUP_MAKERS)
    for module in _ACCELERATE_MODULES:
        apis.append(_accelerate_style(module, "broadcast", TENSOR))
        apis.append(_accelerate_style(module, "broadcast_object_list", OBJECTS))
        apis.extend(Api(f"{module}.{name}", OTHER) for name in _OTHER_ACCELERATE_COLLECTIVES)
    # These return a new tensor and leave their input alone: `y = broadcast(x, 0)` is required.
    for module in ("torch.distributed.nn.functional", "torch.distributed.nn"):
        apis.append(Api(f"{module}.broadcast", TENSOR, "src", 1, None, in_place=False))
    apis.append(
        Api("torch.distributed._functional_collectives.broadcast", TENSOR, "src", 1, None, in_place=False)
    )
    return {api.qualified_name: api for api in apis}


# Framework calls that run collectives inside, by qualified name (evidence: docs/rules/BCL011.md).
_FRAMEWORK_FUNCTIONS = {
    "always broadcasts the parameters from rank 0 when constructed": (
        "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"),
    "always all-gathers the parameters in every forward": (
        "torch.distributed.fsdp.FullyShardedDataParallel",
        "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
        "torch.distributed.fsdp.fully_shard", "torch.distributed.fsdp._fully_shard.fully_shard",
        "torch.distributed._composable.fsdp.fully_shard",
        "torch.distributed._composable.fsdp.fully_shard.fully_shard"),
    "always agrees on a plan with collectives (reduce_scatter, all_gather)": tuple(
        f"torch.distributed.checkpoint.{name}"
        for name in ("save", "load", "async_save", "state_dict_saver.save", "state_dict_loader.load")),
    "all-gathers the parameters under ZeRO-3": (
        "deepspeed.zero.GatheredParameters", "deepspeed.runtime.zero.GatheredParameters",
        "deepspeed.runtime.zero.partition_parameters.GatheredParameters"),
}


def _framework_catalog() -> dict[str, Api]:
    return {name: Api(name, HIDDEN, inside=inside)
            for inside, names in _FRAMEWORK_FUNCTIONS.items() for name in names}


def framework_api(entry: frameworks.Entry) -> Api:
    """A mapped framework call: a function or method named like a collective (`mmengine.dist.barrier`,
    `idist.all_reduce`, `fabric.all_gather`, `self.all_gather` of a LightningModule) is one (BCL005), as
    Accelerate's `gather` and `wait_for_everyone` are; any other runs collectives inside (BCL011)."""
    if entry.kind != "property" and entry.short_name in _COLLECTIVE_NAMES:
        return Api(entry.name, OTHER)
    return Api(entry.name, HIDDEN, inside=entry.runs)


_COLLECTIVE_NAMES = frozenset({"broadcast", "broadcast_object_list", *_OTHER_TORCH_COLLECTIVES, "new_group"})


def _mapped_functions() -> dict[str, Api]:
    """The map's functions under their own names and their public re-exports (`ignite.distributed.barrier`)."""
    framework_map = frameworks.load()
    names = {entry.name: entry.name for entry in framework_map.entries.values() if entry.kind == "function"}
    names.update((alias, real) for alias, real in framework_map.aliases.items() if real in names)
    return {name: replace(framework_api(framework_map.entries[real]), qualified_name=name)
            for name, real in names.items()}


CATALOG = {**_mapped_functions(), **_build_catalog(), **_framework_catalog()}
API_PACKAGES = frozenset(name.split(".", 1)[0] for name in CATALOG)

# Accelerator/PartialState methods are collectives too; their receiver's type cannot be resolved
# statically, so the method name decides. `gather`/`reduce` are also Tensor methods, hence they
# count only on a receiver that names an accelerator (see analysis.module).
ACCELERATOR_METHODS = {
    name: Api(f"Accelerator.{name}", OTHER)
    for name in ("gather", "gather_for_metrics", "reduce", "pad_across_processes", "wait_for_everyone")
}
UNAMBIGUOUS_ACCELERATOR_METHODS = frozenset({"gather_for_metrics", "wait_for_everyone"})


@dataclass(frozen=True)
class Receiver:
    """How the object a framework method is called on is recognised, its type being unknown: its
    last name contains one of `words` (`accelerator`, `self.accelerator`, `model_engine`), or it
    was assigned a call of a class whose name ends with one of `classes` (`SFTTrainer(...)`), or
    the first item of what one of `factories` returns (`model, *_ = deepspeed.initialize(...)`)."""

    owner: str
    words: tuple[str, ...]
    classes: tuple[str, ...]
    factories: tuple[str, ...] = ()  # qualified names


ACCELERATOR = Receiver("Accelerator", ("accelerator",), ("Accelerator",))
TRAINER = Receiver("Trainer", ("trainer",), ("Trainer",))
DEEPSPEED_ENGINE = Receiver("DeepSpeedEngine", ("engine", "deepspeed"), ("DeepSpeedEngine", "PipelineEngine"),
                            ("deepspeed.initialize",))

# The methods judged on a receiver recognised by its name alone (a guess, so only these), with what
# the map says they run; on a receiver whose class is known (analysis.module), every mapped method.
_BY_NAME = {
    ACCELERATOR: ("accelerate.accelerator.Accelerator",
                  ("save_state", "load_state", "get_state_dict", "save_model", "prepare", "prepare_model")),
    TRAINER: ("transformers.trainer.Trainer", ("save_model",)),
    DEEPSPEED_ENGINE: ("deepspeed.runtime.engine.DeepSpeedEngine", ("save_checkpoint", "load_checkpoint")),
}
_BY_NAME_LIGHTNING = (TRAINER, "lightning.pytorch.trainer.trainer.Trainer", ("save_checkpoint",))


def _methods_by_name() -> dict[str, tuple[tuple[Receiver, Api], ...]]:
    framework_map = frameworks.load()
    found: dict[str, list] = {}
    for receiver, (owner, names) in [*_BY_NAME.items(), (_BY_NAME_LIGHTNING[0], _BY_NAME_LIGHTNING[1:])]:
        for name in names:
            entry = framework_map.method(owner, name)
            if entry is not None:
                found.setdefault(name, []).append((receiver, framework_api(entry)))
    return {name: tuple(pairs) for name, pairs in found.items()}


# method -> the receivers it is known on, each with what it runs inside (from the framework map).
FRAMEWORK_METHODS: dict[str, tuple[tuple[Receiver, Api], ...]] = _methods_by_name()

# `model(x)` runs DistributedDataParallel.forward and Metric.forward; a call by that name is a
# module's own forward, calling its layers.
_CALLED_IMPLICITLY = frozenset({"forward"})
# The classes whose forward, run by calling the object, runs a collective in the default
# configuration: what it runs, and the constructor's keywords that, passed False, switch it off.
# DDP broadcasts the buffers (`_pre_forward`, nn/parallel/distributed.py:1782 `self._sync_buffers()`,
# under `forward_sync_buffers`, which `broadcast_buffers` sets; measured: a forward on one rank aborts
# gloo with "128 vs 4 bytes"); made with either False, its forward under `torch.no_grad()` runs none
# (the reducer's `prepare_for_forward` and `_rebuild_buckets` run only with grad enabled). torchmetrics'
# Metric.forward syncs only with `dist_sync_on_step=True`, which the map cannot see.
# Mapped methods that run no collective on an object made with one of these keywords false:
# torchmetrics' compute syncs only `if self._to_sync`, set from `sync_on_compute` (metric.py:163).
SWITCHED_OFF_BY = {"torchmetrics.metric.Metric.compute": ("sync_on_compute",)}
# ...and those a collection runs through its items: off where every item is made with it off.
SWITCHED_OFF_IN_ITEMS = {"torchmetrics.collections.MetricCollection.compute": "sync_on_compute"}
# Framework methods that run their collective only where the object was made with one of these
# keywords true: a torchmetrics Metric's forward (`metric(preds, target)`) syncs the batch's states
# only with `dist_sync_on_step=True` (torchmetrics 1.9.0, metric.py:331 `self._to_sync =
# self.dist_sync_on_step`; the default is False, metric.py:125).
SWITCHED_ON_BY = {"torchmetrics.metric.Metric.forward": (
    ("dist_sync_on_step",), "syncs the batch's metric states across ranks (it was made with dist_sync_on_step=True)")}

# The parameters through which a framework hands a hook this rank's own share of the data: the
# batch of a step (Lightning's loop calls `validation_step(batch, batch_idx)` with what the rank's
# distributed sampler gave it, fit_loop/evaluation_loop), a callback's batch and step outputs, the
# `inputs` of a transformers Trainer's `compute_loss`/`training_step`/`prediction_step`.
_STEPS = ("training_step", "validation_step", "test_step", "predict_step")
_BATCH_HOOKS = ("on_train_batch_start", "on_validation_batch_start", "on_test_batch_start",
                "on_predict_batch_start")
_OUTPUT_HOOKS = ("on_train_batch_end", "on_validation_batch_end", "on_test_batch_end", "on_predict_batch_end")
DATA_PARAMETERS = {
    "lightning.pytorch.core.module.LightningModule": {
        **{name: ("batch",) for name in (*_STEPS, *_BATCH_HOOKS, "on_before_batch_transfer",
                                         "on_after_batch_transfer")},
        **{name: ("outputs", "batch") for name in _OUTPUT_HOOKS}},
    "lightning.pytorch.callbacks.callback.Callback": {
        **{name: ("batch",) for name in _BATCH_HOOKS}, **{name: ("outputs", "batch") for name in _OUTPUT_HOOKS}},
    "transformers.trainer.Trainer": {name: ("inputs",) for name in ("compute_loss", "training_step",
                                                                    "prediction_step")},
}
# The parameters through which Lightning hands a prediction writer this rank's predictions of the
# whole epoch: Lightning deals a prediction loader unpadded (UnrepeatedDistributedSamplerWrapper,
# lightning 2.6.6, trainer/connectors/data_connector.py:241), so they hold as many rows as the
# rank's own share of the data (BasePredictionWriter, callbacks/prediction_writer.py:133).
SHARE_PARAMETERS = {
    "lightning.pytorch.callbacks.callback.Callback": {"write_on_epoch_end": ("predictions", "batch_indices")},
}

# A LightningModule's hooks Lightning calls once per batch of the loader its `*_dataloader` method
# returns (lightning 2.6.6, loops/training_epoch_loop.py, loops/evaluation_loop.py): a collective
# in one runs as often as that loader has batches. With `use_distributed_sampler=False`, Lightning
# leaves the loader's sampler as the module made it (trainer/connectors/data_connector.py:197).
PER_BATCH_HOOKS = {
    **{hook: "train_dataloader" for hook in ("training_step", "on_train_batch_start", "on_train_batch_end")},
    **{hook: "val_dataloader" for hook in ("validation_step", "on_validation_batch_start", "on_validation_batch_end")},
    **{hook: "test_dataloader" for hook in ("test_step", "on_test_batch_start", "on_test_batch_end")},
    **{hook: "predict_dataloader" for hook in ("predict_step", "on_predict_batch_start", "on_predict_batch_end")},
}
OWN_SAMPLER = re.compile(r"\buse_distributed_sampler\s*=\s*False\b")
# A LightningModule's training step: what it returns goes through the Trainer's DDP backward; and
# its `on_train_batch_start`, whose -1 makes the Trainer leave the epoch.
TRAINING_STEP = r"def[ \t]+(?:training_step|on_train_batch_start)[ \t]*\("

# Methods a framework calls on some ranks only, by the framework's base class (short name, in the
# packages named) they override: the method's collectives have no partner on the other ranks.
# Lightning calls `prepare_data` on local rank 0 only (or global rank 0), while the others wait in
# a barrier of their own (trainer/connectors/data_connector.py:94 and :101, lightning 2.6.6).
# accelerate's `Accelerator.log` and `init_trackers` are themselves `@on_main_process`: a tracker's
# `log` and `store_init_configuration` run on the main process only, whatever the tracker's own
# `main_process_only` says (accelerator.py:3312 and :3397, accelerate 1.15.0).
SOME_RANKS_HOOKS = {
    "prepare_data": (("lightning", "pytorch_lightning"), ("LightningDataModule", "LightningModule"),
                     "Lightning calls on local rank 0 only, while the other ranks wait in a barrier of their "
                     "own (lightning 2.6.6, trainer/connectors/data_connector.py:94)"),
    "log": (("accelerate",), ("GeneralTracker",),
            "accelerate's Accelerator.log() calls on the main process only (it is @on_main_process, "
            "accelerate 1.15.0, accelerator.py:3397)"),
    "store_init_configuration": (("accelerate",), ("GeneralTracker",),
                                 "accelerate's Accelerator.init_trackers() calls on the main process only (it is "
                                 "@on_main_process, accelerate 1.15.0, accelerator.py:3312)"),
}

# A transformers TrainerCallback's hooks steer the Trainer through the TrainerControl they are
# handed (`control.should_training_stop = True`): each process's Trainer reads its own control, so a
# flag set on some processes only makes theirs do what the others do not (transformers 5.25.0,
# trainer.py): leave the loops (:2008, :2010) while the others go on to the next step's gradient
# all-reduce; or log (:2293, `nested_gather` of the loss), evaluate (:2315, gathers every batch) or
# save a checkpoint (:2322, `save_model` and a barrier) alone.
TRANSFORMERS = frameworks.load().versions["transformers"]
CONTROL_FLAGS = {
    "should_training_stop": f"makes this process's Trainer leave its training loop (transformers {TRANSFORMERS}, "
                            "trainer.py:2008) while the others go on to the next step's gradient all-reduce",
    "should_epoch_stop": f"makes this process's Trainer leave the epoch (transformers {TRANSFORMERS}, "
                         "trainer.py:2008) while the others go on to the next step's gradient all-reduce",
    "should_log": f"makes this process's Trainer log, which all-gathers the loss (transformers {TRANSFORMERS}, "
                  "trainer.py:2293 nested_gather)",
    "should_evaluate": f"makes this process's Trainer evaluate, which gathers every batch (transformers "
                       f"{TRANSFORMERS}, trainer.py:2315)",
    "should_save": f"makes this process's Trainer save a checkpoint, which runs save_model() and a barrier "
                   f"(transformers {TRANSFORMERS}, trainer.py:2322)",
}

# A transformers Trainer's evaluation loop gathers the loss, logits and labels `prediction_step`
# returns, each only when it is not None (transformers 5.25.0, trainer.py:3040 and :3050-3069): an
# override that returns None for some batches on some processes skips gathers the others run.
SKIPPED_GATHERS = (f"makes the Trainer's evaluation loop skip its gathers of that batch (transformers {TRANSFORMERS}, "
                   "trainer.py:3050)")

# Reading a Lightning Trainer's metrics computes, at the first read after an epoch logged them, the
# values logged for the epoch, and syncs those logged with sync_dist=True (lightning 2.6.6:
# trainer/connectors/logger_connector/logger_connector.py:249 `self.metrics["callback"]`,
# logger_connector/result.py:439 `result_metric.compute()`, :248 `self.meta.sync(self.value.clone())`).
METRICS_SYNC = (f"computes the epoch's metrics logged with sync_dist=True at its first read, an all_reduce each "
                f"(lightning {frameworks.load().versions['lightning']}, trainer/connectors/logger_connector/result.py:439)")

# A Lightning Trainer's flag that its loops read after each batch without syncing it across processes
# (lightning 2.6.6, loops/training_epoch_loop.py:135 `if self.trainer.should_stop:`, fit_loop.py:195):
# set on one process, that process's Trainer leaves `fit` alone. Lightning's own EarlyStopping agrees
# on it first (`trainer.strategy.reduce_boolean_decision`).
LIGHTNING_FLAGS = {
    "should_stop": f"makes this process's Trainer leave its training loop (lightning "
                   f"{frameworks.load().versions['lightning']}, loops/training_epoch_loop.py:135) while the others go "
                   "on to the next step's gradient all-reduce",
}

# Where user code steers a transformers Trainer (CONTROL_FLAGS, SKIPPED_GATHERS): the pre-filter
# parses a file that does, and the cut keeps those lines.
STEERS_TRAINER = (r"\.(?:" + "|".join(sorted({*CONTROL_FLAGS, *LIGHTNING_FLAGS})) + r")[ \t]*=[ \t]*True\b"
                  r"|\bdef[ \t]+(?:prediction_step|get_train_dataloader)\b")
STEERS_TRAINER_WORDS = ("should_", "prediction_step", "get_train_dataloader")

# Calls that set how verbose logging is (logging's, and transformers' and datasets' own loggers),
# and a logger's answer to "would this level print?": set by a test on the rank, the answer (and
# what a logging call formats) differs between ranks, so the cut keeps the setters.
LEVEL_SETTERS = frozenset({"setLevel", "basicConfig", "set_verbosity", "set_verbosity_info", "set_verbosity_warning",
                           "set_verbosity_error", "set_verbosity_debug"})
LEVEL_SETTER_WORDS = ("setLevel", "basicConfig", "set_verbosity")  # what a text holds that calls one
LEVEL_QUERIES = frozenset({"isEnabledFor", "getEffectiveLevel"})

# Lightning's saves write on global rank 0 alone and then wait at a barrier (lightning 2.6.6):
# an I/O error raises on rank 0 only, before the barrier the other ranks are already in.
WRITES_THEN_WAITS = {
    "lightning.fabric.fabric.Fabric.save": "fabric/fabric.py:866, fabric/strategies/strategy.py:280",
    "lightning.pytorch.trainer.trainer.Trainer.save_checkpoint": "pytorch/trainer/trainer.py:1464",
}

# Loads that read the file on every process, then wait at a barrier (lightning 2.6.6): the
# parameter naming the path (keyword, position), and the lines.
READS_THEN_WAITS = {
    "lightning.fabric.fabric.Fabric.load": ("path", 0, "fabric/fabric.py:909, :915"),
}

# accelerate's save_state writes the model and optimizer files on the main process alone (accelerate
# 1.15.0, checkpointing.py:114 through utils.save) and load_state reads them on every process
# (checkpointing.py:247), with no barrier in either: the parameter naming the path (keyword,
# position), and the line.
MAIN_PROCESS_SAVES = {"accelerate.accelerator.Accelerator.save_state": ("output_dir", 0, "checkpointing.py:114")}
EVERY_PROCESS_LOADS = {"accelerate.accelerator.Accelerator.load_state": ("input_dir", 0, "checkpointing.py:247")}

# nn.Module.state_dict() calls `_save_to_state_dict` of the module and of every submodule, and
# load_state_dict() `_load_from_state_dict` (torch 2.13.0, nn/modules/module.py): a class that
# overrides one with a collective runs it wherever a module holding it is saved or loaded.
STATE_DICT_HOOKS = {"state_dict": "_save_to_state_dict", "load_state_dict": "_load_from_state_dict"}

# FSDP2's `fully_shard(module)` changes the module's class in place and returns it (torch 2.13.0,
# distributed/fsdp/_fully_shard/_fully_shard.py): by the function's last name, its qualified names.
FSDP2_MODULE = "torch.distributed.fsdp._fully_shard._fully_shard.FSDPModule"
SHARDS_IN_PLACE = frozenset({
    "torch.distributed.fsdp.fully_shard", "torch.distributed.fsdp._fully_shard.fully_shard",
    "torch.distributed.fsdp._fully_shard._fully_shard.fully_shard", "torch.distributed._composable.fsdp.fully_shard",
    "torch.distributed._composable.fsdp.fully_shard.fully_shard"})
SHARDING_WORDS = frozenset(name.rsplit(".", 1)[1] for name in SHARDS_IN_PLACE)
# FSDP's static methods that take the wrapped module first (torch 2.13.0,
# fsdp/fully_sharded_data_parallel.py): `FSDP.state_dict_type(model, FULL_STATE_DICT)` says that
# `model` is an FSDP module, whose `state_dict()` then gathers the full parameters.
WRAPPED_MODULE_METHODS = frozenset({"state_dict_type", "set_state_dict_type", "summon_full_params",
                                    "optim_state_dict", "full_optim_state_dict", "sharded_optim_state_dict"})
FORWARD_RUNS_COLLECTIVES = {
    "torch.nn.parallel.distributed.DistributedDataParallel": (
        "broadcasts the module's buffers in pre_forward()", ("broadcast_buffers", "forward_sync_buffers")),
    "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel": (
        "all-gathers the sharded parameters in forward()", ()),
    FSDP2_MODULE: ("all-gathers the sharded parameters in a forward pre-hook", ()),
}
# Every method name the map knows, for receivers whose class is known; they count as calls only in
# a file that names the framework (GATED_CALL_WORDS), since `log(`, `fit(` and `step(` are everywhere.
_MAPPED_METHOD_WORDS = {
    frameworks.IMPORT_NAMES[framework]: frozenset(entry.short_name for entry in frameworks.load().entries.values()
                                                  if entry.framework == framework and entry.kind != "function")
    - _CALLED_IMPLICITLY
    for framework in frameworks.load().versions
}
# Frameworks most files of an ecosystem import (diffusers imports transformers and accelerate): there,
# names as common as `train(` or `step(` would make every file worth parsing; only their distinctive
# method names count (`save_model`, `evaluate`, `save_checkpoint`).
_WIDELY_IMPORTED = ("transformers", "accelerate", "deepspeed", "torch")
_COMMON_METHOD_NAMES = frozenset({"train", "step", "backward", "setup", "log", "save", "load", "compute", "sync",
                                  "test", "validate", "fit", "profile", "print", "training_step", "compute_loss",
                                  "prediction_step"})
for _name in _WIDELY_IMPORTED:
    _MAPPED_METHOD_WORDS[_name] -= _COMMON_METHOD_NAMES
# transformers' Trainer shares method names with half the ecosystem (diffusers' `push_to_hub`,
# `get_train_dataloader`): only the calls measured to hang when one rank makes them.
_MAPPED_METHOD_WORDS["transformers"] &= frozenset({"evaluate", "predict", "save_model"})
_MAPPED_METHOD_WORDS.update({"pytorch_lightning": _MAPPED_METHOD_WORDS["lightning"],
                             "lightning_fabric": _MAPPED_METHOD_WORDS["lightning"]})
_MAPPED_METHOD_WORDS["torch.distributed"] = _MAPPED_METHOD_WORDS.pop("torch")
MAPPED_METHOD_NAMES = frozenset().union(*_MAPPED_METHOD_WORDS.values())
# Of those, the properties: read, not called (`trainer.log_dir`).
MAPPED_PROPERTY_NAMES = frameworks.load().property_names()

# Call names that count only in a file that names their module: `dcp.save(` is a collective,
# `torch.save(` is not, and "save"/"load" alone would let half as many files again through the
# pre-filter (743 against 494 of the corpus's 8,684).
GATED_CALL_WORDS = {"torch.distributed.checkpoint": frozenset({"save", "load", "async_save"}),
                    # `local_sgd.step()` averages the parameters; `step(` counts where the module is named
                    "accelerate.local_sgd": frozenset({"step"}),
                    **_MAPPED_METHOD_WORDS}

# A collective can go wrong without a rank condition: under a test on the clock (a deadline;
# analysis.divergence's other sources all come from the rank), in a loop over a process's own share
# of Accelerate's `split_between_processes`, or started with `async_op` and read before its wait
# (BCL016).
DIVERGENCE_TEXT_WORDS = ("time.time(", "perf_counter(", "monotonic(", "async_op", "split_between_processes",
                         "device_specific",  # accelerate's set_seed: seeds each process apart (words.seeds_per_rank)
                         "find_executable_batch_size",  # each process settles on its own size
                         # a hook handed the rank's own batch (DATA_PARAMETERS)
                         "_step(", "_batch_start(", "_batch_end(", "_batch_transfer(", "compute_loss(")
# Or in a loop over a rank's own share of the data (analysis.divergence's DATA: a loss, a NaN
# check): `for batch in train_loader:`. A pattern, not a word: "loader" is in most training code.
DATA_LOOP_WORDS = ("loader", "batches")
# Decorators that run what they wrap on one process only (accelerate's, Lightning's, mmengine's and mmcv's).
ONE_RANK_DECORATORS = frozenset({"on_main_process", "on_local_main_process", "on_last_process", "on_process",
                                 "rank_zero_only", "master_only"})
# Methods that add to a container in place (`items.append(x)`): how many it holds changes.
MUTATORS = frozenset({"append", "extend", "add", "update", "insert", "setdefault", "appendleft"})

# Every spelling of a rank condition contains one of these (ranks.py): `get_rank()`, `RANK` in
# the environment, `process_index`, `is_main_process`, `is_last_process`, `on_main_process`,
# transformers' `is_world_process_zero` and `TrainingArguments.should_save`/`should_log` (typed:
# analysis.training_arguments), Lightning's `is_global_zero`, mmengine's `@master_only`.
RANK_TEXT_WORDS = ("rank", "RANK", "process_index", "main_process", "last_process", "on_process",
                   "process_zero", "global_zero", "should_save", "should_log", "master_only") + DIVERGENCE_TEXT_WORDS
# The names a file must contain to be worth parsing: the distributed APIs and mapped frameworks.
# transformers is not one: it is imported by most of the Hugging Face ecosystem, where "rank" (a LoRA
# rank) is everywhere (diffusers: 19 files passed before, 267 with it); a transformers file that runs
# collectives names torch.distributed or accelerate, or its `Trainer` (`trainer.evaluate()` gathers;
# 15 more files of the 9,351 of the pinned libraries pass with it).
API_TEXT_WORDS = ("distributed", "accelerat", "deepspeed", "wait_for_everyone", "gather_for_metrics",
                  "lightning", "ignite", "mmengine", "torchmetrics", "Trainer")

# Text that must occur in a file for any rule to fire: the pre-filter's vocabulary.
CALL_WORDS = frozenset(
    {api.short_name for api in CATALOG.values()} | set(ACCELERATOR_METHODS) | set(FRAMEWORK_METHODS)
) - GATED_CALL_WORDS["torch.distributed.checkpoint"]
# The names of collectives and of the calls that run one whatever their receiver (not `save` and
# `load`, which are `torch.distributed.checkpoint`'s only in a file that names it).
NAMED_LIKE_A_COLLECTIVE = frozenset({api.short_name for api in CATALOG.values()} | set(ACCELERATOR_METHODS)) \
    - GATED_CALL_WORDS["torch.distributed.checkpoint"]
# The names of each mapped framework's calls that run collectives (Accelerate's collectives too).
NAMES_BY_FRAMEWORK = {framework: frozenset(entry.short_name for entry in frameworks.load().entries.values()
                                           if entry.framework == framework)
                      | (frozenset(ACCELERATOR_METHODS) if framework == "accelerate" else frozenset())
                      for framework in frameworks.load().versions}
# Framework method names: a call of one is a framework call only through its receiver (a class the
# analysis knows, or a name apis.Receiver recognises). Elsewhere it is no unresolved collective
# (`logger.log(...)`, `dataset.prepare()`, mmengine's own `runner.save_checkpoint()`).
FRAMEWORK_ONLY_WORDS = (MAPPED_METHOD_NAMES | frozenset(FRAMEWORK_METHODS)) - NAMED_LIKE_A_COLLECTIVE


def gated_call_words(source: bytes | str) -> frozenset:
    """The GATED_CALL_WORDS that count in `source` (the file's bytes or text): those whose
    module it names, as `torch.distributed.checkpoint` or `from torch.distributed import checkpoint`;
    a framework's, when it imports the framework (`import lightning as L`, `from ignite import ...`)."""
    text = isinstance(source, str)
    return frozenset().union(*(words for module, words in GATED_CALL_WORDS.items()
                               if _LAST_NAME[module][text] in source
                               and any(pattern[text].search(source) for pattern in _NAMES_MODULE[module])))


def _from_parent_import(module: str) -> str:
    """`from torch.distributed import checkpoint` (or `import (..., checkpoint as dcp)`)."""
    parent, _, name = module.rpartition(".")
    return (r"from[ \t]+" + re.escape(parent) + r"[ \t]+import[ \t]*(?:\([^)]*|[^\r\n]*)\b"
            + re.escape(name) + r"\b")


def _names_module(module: str) -> tuple[str, ...]:
    """What must occur in a file for `module`'s gated words to count there."""
    if module in _MAPPED_METHOD_WORDS:  # a framework: imported, not merely mentioned in a docstring
        return (r"(?:^|[\r\n])[ \t]*(?:import|from)[ \t]+" + re.escape(module) + r"\b",)
    return (re.escape(module), _from_parent_import(module))


# Every pattern of a module names its last part: a substring test skips the regular expressions
# (which cannot skip ahead to a literal) in the many texts that do not.
_LAST_NAME = {module: {True: module.rpartition(".")[2], False: module.rpartition(".")[2].encode()}
              for module in GATED_CALL_WORDS}
_NAMES_MODULE = {module: tuple({True: re.compile(pattern), False: re.compile(pattern.encode())}
                               for pattern in _names_module(module))
                 for module in GATED_CALL_WORDS}

# Methods taken to run before a class's other methods: what they assign to `self` is there when a
# later method broadcasts it (analysis.module follows such attributes; reduce.py keeps them).
SETUP_METHOD = re.compile(r"__init__$|_*(setup|init|initialize|build|prepare|load|configure)(_|$)|on_\w*start$")



# `generate()` arguments that can hold every rank's output to one length (`min_new_tokens` equal
# to `max_new_tokens`): with one of them the length is not known to differ.
LENGTH_FLOORS = frozenset({"min_new_tokens", "min_length"})
