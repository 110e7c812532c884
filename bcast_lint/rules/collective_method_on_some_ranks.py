from __future__ import annotations

from typing import Iterator

from bcast_lint.analysis import apis
from bcast_lint.analysis.module import CallSite, ModuleAnalysis
from bcast_lint.rules.base import Invalid, Valid
from bcast_lint.rules.collective_on_some_ranks import CollectiveOnSomeRanks

_HANG = "the other ranks never join it and every rank hangs until the timeout"


class CollectiveMethodOnSomeRanks(CollectiveOnSomeRanks):
    """
    ## What it does
    Flags a framework call that runs collectives inside it, called where only some ranks reach
    it: under `if accelerator.is_main_process:` or any other rank test, after a rank-dependent
    early exit, in a function decorated with `@accelerator.on_main_process` or `rank_zero_only`,
    or inside `with accelerator.main_process_first():`. The calls, and what they run inside in
    the pinned versions (accelerate 1.15.0, transformers 5.24.0, deepspeed 0.19.8, lightning 2.6.6,
    torch 2.13.0):

    | call | runs a collective | evidence |
    | --- | --- | --- |
    | `Accelerator.save_state` | with automatic checkpoint naming, under DeepSpeed, under FSDP | `accelerator.py:3688` `self.wait_for_everyone()`; `:3706` `model.save_checkpoint(...)`; `:3701` `save_fsdp_model` (`utils/fsdp_utils.py:180` `dist_cp.save`) |
    | `Accelerator.load_state` | under DeepSpeed, under FSDP | `accelerator.py:3854` `model.load_checkpoint(...)`; `:3849` `load_fsdp_model` (`utils/fsdp_utils.py:272` `dist_cp.load`) |
    | `Accelerator.get_state_dict`, `Accelerator.save_model` | under DeepSpeed ZeRO-3, under FSDP | `accelerator.py:4083` `_zero3_consolidated_16bit_state_dict()` (deepspeed `runtime/engine.py:5659` `GatheredParameters`); `:4107` FULL_STATE_DICT `state_dict()`; `save_model` calls it at `:3530` |
    | `Accelerator.prepare`, `prepare_model` | in every multi-process run that gets a model | `accelerator.py:1898`, `:2060` `DistributedDataParallel(...)`; `:1971` `FSDP(...)`; `:1550` `_prepare_deepspeed` |
    | transformers `Trainer.save_model` | under DeepSpeed ZeRO-3, under FSDP | `trainer.py:4107` `accelerator.get_state_dict(self.model)`; `:4118` `_zero3_consolidated_16bit_state_dict(...)` |
    | DeepSpeed `engine.save_checkpoint` | always | `runtime/engine.py:4900`, `:4964`, `:4982` `dist.barrier()`; `:4858` `dist.all_reduce` (tag validation) |
    | DeepSpeed `engine.load_checkpoint` | under ZeRO | `runtime/engine.py:4460` `_load_zero_checkpoint` (`:4743` `dist.recv` chain) |
    | Lightning `Trainer.save_checkpoint` | always | `pytorch/trainer/trainer.py:1464` `self.strategy.barrier(...)`; its docstring: "needs to be called on all processes" |
    | `deepspeed.zero.GatheredParameters(...)` | under ZeRO-3 | `runtime/zero/partition_parameters.py:2474` `all_gather` on entry, `:2560` `dist.broadcast` on exit |
    | `torch.distributed.checkpoint.save`/`load` | always | `checkpoint/state_dict_saver.py:487` `reduce_scatter`, `:513` `all_reduce`; `state_dict_loader.py:295`, `:314` |
    | `DistributedDataParallel(...)` | always | `nn/parallel/distributed.py:1064` `_verify_param_shape_across_processes`, `:1066` `_sync_module_states` |
    | `FullyShardedDataParallel(...)`, `fully_shard(...)` | always, at the first forward; at construction with `sync_module_states` or hybrid sharding | `fsdp/_fully_shard/_fully_shard.py:115` ("Before forward, FSDP all-gathers"); `fsdp/_init_utils.py:627` `_sync_module_params_and_buffers`, `:212` `new_subgroups` |
    | `dist.new_group`, `new_subgroups` | always, unless `use_local_synchronization=True` | `distributed_c10d.py:5757`: "requires that all processes in the main group ... enter this function, even if they are not going to be members of the group" |

    Methods are recognised by their receiver, whose type cannot be resolved: a name or
    attribute containing `accelerator` (or assigned `Accelerator(...)`) for Accelerate,
    `trainer` (or a `...Trainer(...)`) for transformers and Lightning, `engine` or `deepspeed`
    (or a `DeepSpeedEngine`, or the first item `deepspeed.initialize(...)` returns, as in
    `model, optimizer, _, _ = deepspeed.initialize(...)`) for DeepSpeed. A call on `self` is not
    judged: it is the framework's own code, or a subclass's. Functions and classes are resolved through imports.

    ## Why is this bad?
    These calls are collectives in disguise: every rank must make them, and the framework
    itself decides which rank writes files (Accelerate, transformers and DeepSpeed write on the
    main process internally). Called on the main process only, the hidden collective waits for
    ranks that never arrive: the job hangs until the backend's timeout, or a rank that ran ahead
    pairs with the wrong collective. Several only hang in some configurations, which is why
    the bug survives testing: `save_state` under plain DDP runs no collective, and hangs once
    DeepSpeed, FSDP or `ProjectConfiguration(automatic_checkpoint_naming=True)` is switched on
    (measured with the last, 2 processes, gloo: rank 1's next `wait_for_everyone()` pairs with
    the barrier inside `save_state`, rank 1 runs to the end and rank 0 dies with
    `Connection closed by peer`).

    ## Example
    ```python
    if accelerator.is_main_process:
        accelerator.save_state(save_path)
    ```

    ## Use instead
    ```python
    accelerator.save_state(save_path)  # every rank; Accelerate writes on the main process
    ```
    Keep under the guard only what really is main-process work (logging, `torch.save` of an
    already gathered state dict, pushing to a hub).

    ## Fix safety
    Unsafe, as BCL005's: when the call is the last statement of its rank-conditional branch and
    everything it uses is bound on every rank before the branch, the fix moves it after the
    branch. The other ranks then run it too, which is the point, but also changes what they do
    (they join the save, and create the directory if the framework does not guard that).
    Calls in decorated functions, in `main_process_first()` blocks, or after an early exit have
    no fix.
    """

    code = "BCL011"
    VALID = (
        Valid("if accelerator.is_main_process:\n    print('saving')\naccelerator.save_state('ckpt')"),
        Valid("if accelerator.is_main_process:\n    accelerator.save_state('a')\nelse:\n"
              "    accelerator.save_state('b')"),
        # Look-alikes: another object's method of the same name, or a main-only framework call.
        Valid("def f(checkpointer, state):\n    if rank == 0:\n        checkpointer.save_checkpoint(state)"),
        Valid("def f(model, args):\n    model, optimizer = build(model, args)\n    if rank == 0:\n"
              "        model.save_checkpoint('ckpt')"),
        Valid("def f(state, path):\n    if rank == 0:\n        torch.save(state, path)"),
        Valid("def f(model, path):\n    if accelerator.is_main_process:\n        model.save_pretrained(path)\n"
              "        accelerator.save(model.state_dict(), path)"),
        Valid("if rank == 0:\n    group = dist.new_group([0, 1], use_local_synchronization=True)"),
        Valid("from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = torch.nn.Linear(2, 2)\n"
              "if accelerator.num_processes > 1:\n    model = DDP(model)"),
        Valid("class MyTrainer:\n    def save(self, out):\n        if self.is_world_process_zero():\n"
              "            self.save_model(out)"),
    )
    INVALID = (
        Invalid("if accelerator.is_main_process:\n    accelerator.save_state('ckpt')",
                expected_message="save_state(), which runs collectives under DeepSpeed, FSDP or automatic "
                f"checkpoint naming, runs only on ranks where 'accelerator.is_main_process' is true: {_HANG}",
                range=(2, 5, 2, 35),
                expected_replacement="if accelerator.is_main_process:\n    pass\naccelerator.save_state('ckpt')"),
        Invalid("def f(model_engine):\n    if rank == 0:\n        model_engine.save_checkpoint('ckpt')\n"
                "        print('saved')",
                expected_message="save_checkpoint(), which always runs barriers and an all_reduce, runs only "
                f"on ranks where 'rank == 0' is true: {_HANG}",
                range=(3, 9, 3, 45)),
        Invalid("def f(trainer, out):\n    if trainer.is_world_process_zero():\n        trainer.save_model(out)",
                expected_message="save_model(), which gathers the sharded weights under DeepSpeed ZeRO-3 or "
                f"FSDP, runs only on ranks where 'trainer.is_world_process_zero()' is true: {_HANG}",
                range=(3, 9, 3, 32),
                expected_replacement="def f(trainer, out):\n    if trainer.is_world_process_zero():\n"
                "        pass\n    trainer.save_model(out)"),
        Invalid("import deepspeed\ndef f(module):\n    if rank == 0:\n"
                "        with deepspeed.zero.GatheredParameters(module.weight, modifier_rank=0):\n"
                "            module.weight.fill_(1.0)",
                expected_message="GatheredParameters(), which all-gathers the parameters under ZeRO-3, runs "
                f"only on ranks where 'rank == 0' is true: {_HANG}",
                range=(4, 14, 4, 79)),
        Invalid("@accelerator.on_main_process\ndef save(path):\n    accelerator.save_state(path)",
                expected_message="save_state(), which runs collectives under DeepSpeed, FSDP or automatic "
                "checkpoint naming, is called in 'save', which @accelerator.on_main_process runs on some "
                f"ranks only: {_HANG}",
                range=(3, 5, 3, 33)),
        # The engine is the first item deepspeed.initialize() returns, whatever its name.
        Invalid("import deepspeed\ndef f(model, args):\n    model, optimizer, _, _ = deepspeed.initialize(model=model, "
                "args=args)\n    if rank == 0:\n        model.save_checkpoint('ckpt')",
                expected_message="save_checkpoint(), which always runs barriers and an all_reduce, runs only "
                f"on ranks where 'rank == 0' is true: {_HANG}", range=(5, 9, 5, 38),
                expected_replacement="import deepspeed\ndef f(model, args):\n    model, optimizer, _, _ = "
                "deepspeed.initialize(model=model, args=args)\n    if rank == 0:\n        pass\n"
                "    model.save_checkpoint('ckpt')"),
        Invalid("import deepspeed\nnet = deepspeed.initialize(model=model, args=args)[0]\nif rank == 0:\n"
                "    net.load_checkpoint('ckpt')",
                expected_message="load_checkpoint(), which runs collectives under ZeRO, runs only on ranks "
                f"where 'rank == 0' is true: {_HANG}", range=(4, 5, 4, 32),
                expected_replacement="import deepspeed\nnet = deepspeed.initialize(model=model, args=args)[0]\n"
                "if rank == 0:\n    pass\nnet.load_checkpoint('ckpt')"),
        Invalid("from torch.distributed import checkpoint as dcp\ndef f(state, path):\n    if rank == 0:\n"
                "        dcp.save(state, checkpoint_id=path)\n        print(path)",
                expected_message="save(), which always agrees on a plan with collectives (reduce_scatter, "
                f"all_gather), runs only on ranks where 'rank == 0' is true: {_HANG}",
                range=(4, 9, 4, 44)),
        Invalid("import torch.distributed.checkpoint as dcp\ndef f(state, path):\n    if rank == 0:\n"
                "        dcp.save(state, checkpoint_id=path)\n        print(path)",
                expected_message="save(), which always agrees on a plan with collectives (reduce_scatter, "
                f"all_gather), runs only on ranks where 'rank == 0' is true: {_HANG}",
                range=(4, 9, 4, 44)),
        Invalid("from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = torch.nn.Linear(2, 2)\n"
                "if local_rank == 0:\n    model = DDP(model)\n    print(model)",
                expected_message="DistributedDataParallel(), which always broadcasts the parameters from rank "
                f"0 when constructed, runs only on ranks where 'local_rank == 0' is true: {_HANG}",
                range=(4, 13, 4, 23)),
        Invalid("def f():\n    if rank == 0:\n        group = dist.new_group([0, 1])\n        return group",
                expected_message="new_group(), which every process of the job must enter, as torch documents, "
                f"runs only on ranks where 'rank == 0' is true: {_HANG}",
                range=(3, 17, 3, 39)),
    )

    @staticmethod
    def sites(analysis: ModuleAnalysis) -> Iterator[CallSite]:
        return (site for site in analysis.calls if site.api.payload == apis.HIDDEN)
