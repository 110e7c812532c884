from __future__ import annotations

import textwrap
from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis import apis, frameworks
from bcast_lint.analysis.module import PREPARED_ITERATION, CallSite, ModuleAnalysis, collator_functions
from bcast_lint.analysis.divergence import CONTROL
from bcast_lint.analysis.bindings import target_names
from bcast_lint.analysis.ranks import boolean_leaves
from bcast_lint.analysis.logged_metrics import plateau_monitors
from bcast_lint.analysis.training_arguments import best_metric
from bcast_lint.analysis.expressions import argument_value, is_none, is_self_attribute, last_name
from bcast_lint.analysis.unused_parameters import outputs_used_sometimes, skipped_submodules
from bcast_lint.analysis.walk import ScopeVisitor, ends_in, every_node, path_to
from bcast_lint.analysis.words import NEW_TENSOR_FUNCTIONS
from bcast_lint.rules.base import Invalid, Report, Valid
from bcast_lint.rules.collective_on_some_ranks import CollectiveOnSomeRanks, test_varies

_HANG = "the other ranks never join it and every rank hangs until the timeout"


# A TrainerCallback that sets the best-model metric on the main process only.
_BEST_METRIC_ON_MAIN = """
            from transformers import Trainer, TrainerCallback, TrainingArguments
            class Bench(TrainerCallback):
                def on_evaluate(self, args, state, control, metrics=None, **kwargs):
                    gathered = [None] * args.world_size if args.process_index == 0 else None
                    dist.gather_object(answer(), gathered, dst=0)
                    if gathered is not None:
                        metrics["eval_bench"] = sum(gathered) / len(gathered)
            def main():
                args = TrainingArguments(output_dir="out", metric_for_best_model="bench")
                trainer = Trainer(model=make(), args=args, callbacks=[Bench()])
                trainer.train()
            """

# A LightningModule that logs "val_auc" on rank 0 only, and a ModelCheckpoint that monitors it.
_MONITORED_ON_RANK_ZERO = """
            import lightning as L
            from lightning.pytorch.callbacks import ModelCheckpoint
            class Classifier(L.LightningModule):
                def on_validation_epoch_end(self):
                    if self.global_rank == 0:
                        self.log("val_auc", compute_auc())
            def main():
                trainer = L.Trainer(callbacks=[ModelCheckpoint(monitor="val_auc", save_top_k=2)])
                trainer.fit(Classifier())
            """

# A Lightning module whose loader's collate function drops the records its dataset could not read
# (pytorch-lightning#6753).
_DROPPING_COLLATOR = """
    import lightning as L
    from torch.utils.data import DataLoader, Dataset
    class Records(Dataset):
        def __len__(self):
            return 16
        def __getitem__(self, idx):
            if idx in BAD:
                return None
            return torch.ones(4)
    def drop_bad(samples):
        samples = [s for s in samples if s is not None]
        if not samples:
            return None
        return torch.stack(samples)
    class Model(L.LightningModule):
        def training_step(self, batch, batch_idx):
            return self.net(batch).sum()
        def train_dataloader(self):
            return DataLoader(Records(), batch_size=2, collate_fn=drop_bad)
    """

# A Trainer subclass that asks its own Trainer to save by the tokens this process has seen
# (speechbrain#2192's token-interval checkpoints).
_TOKEN_INTERVAL_SAVE = """
    from transformers import Trainer
    class TokenTrainer(Trainer):
        tokens_seen = 0
        next_save = 100
        def training_step(self, model, inputs, num_items_in_batch=None):
            self.tokens_seen += int(inputs["attention_mask"].sum())
            if self.tokens_seen >= self.next_save:
                self.next_save += 100
                self.control.should_save = True
            return super().training_step(model, inputs, num_items_in_batch)
    """

_JOINED_STEPS = ("from torch.distributed.algorithms.join import Join\n"
                 "from torch.nn.parallel import DistributedDataParallel as DDP\nROWS = {0: 40, 1: 24}\n"
                 "def train(rank):\n    x = torch.randn(ROWS[rank], 4)\n"
                 "    model = DDP(torch.nn.Sequential(torch.nn.Linear(4, 1), torch.nn.BatchNorm1d(1)))\n"
                 "    with model.join():\n        for piece in x.split(8):\n"
                 "            loss = model(piece).sum()\n            loss.backward()\n")


# Each process stops on the mean loss of its own validation batches.
_EARLY_STOP = ("def fit(model, train_dl, val_dl):\n    best = None\n    for epoch in range(10):\n"
               "        for batch in train_dl:\n            accelerator.backward(model(batch))\n"
               "        losses = []\n        for batch in val_dl:\n            losses.append(model(batch).item())\n"
               "        val = sum(losses) / len(losses)\n        if best is not None and val > best:\n"
               "            break\n        best = val\n    accelerator.wait_for_everyone()\n")

# A plateau scheduler stepped with what each process logged.
_PLATEAU = ("""
    import lightning as L
    import torch
    class M(L.LightningModule):
        def validation_step(self, batch, batch_idx):
            self.log("val_loss", self.net(batch).mean())
        def configure_optimizers(self):
            opt = torch.optim.SGD(self.parameters(), lr=0.1)
            sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt)
            return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "monitor": "val_loss"}}
    def main():
        L.Trainer(devices=2, strategy="ddp").fit(M())
    """)

# Steps over a file of the rank's own, as many as its rows.
_OWN_FILE = ("from torch.nn.parallel import DistributedDataParallel as DDP\n"
             "def train(net):\n    model = DDP(net)\n    data = torch.load(f'shard_{dist.get_rank()}.pt')\n"
             "    for i in range(0, len(data), 8):\n        model(data[i:i + 8]).sum().backward()\n")

# A tracker asked for its best epoch on rank 0 only: it computes every epoch's metric.
_TRACKED = ("from torchmetrics import MeanSquaredError\nfrom torchmetrics.wrappers import MetricTracker\n"
            "def fit(model, batches):\n    tracker = MetricTracker(MeanSquaredError(), maximize=False)\n"
            "    for epoch in range(3):\n        tracker.increment()\n        for x, y in batches:\n"
            "            tracker.update(model(x), y)\n        if rank == 0:\n"
            "            print(tracker.best_metric())\n")

# A Fabric step that calls the wrapped model's submodules one by one.
_FABRIC_STEPS = ("""
    import lightning as L
    def train(net, opt, loader):
        fabric = L.Fabric(devices=2, strategy="ddp")
        model, opt = fabric.setup(net, opt)
        for x, y in loader:
            feats = model.backbone(x)
            loss = model.head(feats).sum()
            fabric.backward(loss)
            opt.step()
    """)

# A step helper that skips a batch too small for BatchNorm; the batches are windows of each rank's
# own piece of the rows, whose last one is as long as what the piece leaves (pytorch/xla#855).
_TAIL_STEP = ("""
    from torch.nn.parallel import DistributedDataParallel as DDP
    def train_step(model, opt, x):
        if x.shape[0] < 2:
            return None
        return model(x).sum().item()
    def main(net, rows, opt):
        model = DDP(net)
        shard = torch.arange(len(rows)).tensor_split(dist.get_world_size())[rank]
        for start in range(0, len(shard), 4):
            idx = shard[start:start + 4]
            train_step(model, opt, rows[idx])
    """)


# An evaluation that returns early where a batch of the rank's own fails to update the metric,
# then returns what the metric computes (synced) on the other ranks (lmms-eval#1304).
_FAILED_UPDATE = ("""
    from torchmetrics.classification import BinaryF1Score
    def evaluate(model, loader, metric):
        try:
            for xb, yb in loader:
                metric.update(model(xb).sigmoid(), yb)
        except RuntimeError:
            return None
        return metric.compute().item()
    def main(model, val_loader):
        f1 = BinaryF1Score()
        return evaluate(model, val_loader, f1)
    """)


# A LightningModule holding a torchmetrics metric of the module's own class (DeepForest#1407).
_HIT_RATE = ("import lightning as L\nfrom torchmetrics import Metric\nclass HitRate(Metric):\n    def __init__(self):\n"
             "        super().__init__()\n        self.add_state('hits', default=[], dist_reduce_fx='cat')\n"
             "    def update(self, hit):\n        self.hits.append(hit)\n    def compute(self):\n"
             "        return torch.cat(self.hits).mean() if len(self.hits) else torch.tensor(0.0)\n"
             "class Detector(L.LightningModule):\n    def __init__(self):\n        super().__init__()\n"
             "        self.hit_rate = HitRate()\n    def on_validation_epoch_end(self):\n")


class CollectiveMethodOnSomeRanks(CollectiveOnSomeRanks):
    """
    ## What it does
    Flags a framework call that runs collectives inside it, called where only some ranks reach
    it: under `if accelerator.is_main_process:`, `if trainer.is_global_zero:`, `if
    self.global_rank == 0:` or any other rank test, after a rank-dependent early exit, in a
    function decorated with `@accelerator.on_main_process` or `rank_zero_only`, or inside
    `with accelerator.main_process_first():`.

    Which calls run collectives comes from the framework map, generated by
    {map_source}. For each public method, property or function the map gives the
    first call on the way and the chain of `file:line` hops that proves it; where a call runs
    one only under an argument (`LightningModule.log(..., sync_dist=True)`,
    `get_model_state_dict(..., options=StateDictOptions(full_state_dict=True))`, also through a
    name the module assigns so) it is flagged only when the argument is passed, or when it is handed an object that runs one (a torchmetrics
    Metric logged with `self.log("recall", self.recall)` is computed, and synced, at the epoch's end
    on the ranks that logged it), or when it logs a key that a `ModelCheckpoint(monitor=...)` or
    `EarlyStopping(...)` of the module monitors: after each validation every rank looks the key up,
    and the ranks that never logged it raise; likewise a transformers callback that sets the metric
    `TrainingArguments(metric_for_best_model=...)` names (`metrics["eval_acc"] = ...` in
    `on_evaluate`) under a test that differs between ranks. Hand-written entries (marked) cover what the call graph cannot
    follow, each with the line that proves it. Many run their collective only in some
    configurations (under DeepSpeed, FSDP or a distributed strategy); they are flagged all the same,
    since the configuration is chosen elsewhere.

    A framework's save that writes on global rank 0 alone (`trainer.save_checkpoint(path)`,
    `fabric.save(path, state)`) into a temporary directory of each process's own
    (`tempfile.mkdtemp()`) leaves nothing there on the other ranks: a save retried under
    `if not os.path.isfile(path):` runs on those ranks alone.

    A LightningModule's `training_step` that returns None, or a new tensor no parameter reaches
    (`torch.tensor(0.0, requires_grad=True)`), under a test that differs between ranks while its
    other returns compute the loss, is flagged at that `return`: the Trainer's backward through DDP
    all-reduces gradients only where the loss reaches the parameters.

    The map's functions and methods named like a collective (`fabric.barrier()`, `fabric.all_gather()`,
    a LightningModule's `self.all_gather()`, `trainer.strategy.barrier()`, `idist.all_reduce()`) are
    collectives themselves, flagged by BCL005 as Accelerate's `gather` and `wait_for_everyone` are;
    the table lists the others.

    | call | runs inside | only with | evidence (first and last hop) |
    | --- | --- | --- | --- |
    {map_table}

    Besides the map, torch's own: `DistributedDataParallel(...)` (always broadcasts the parameters
    when constructed, `nn/parallel/distributed.py:1064` `_verify_param_shape_across_processes`, `:1066`
    `_sync_module_states`), `FullyShardedDataParallel(...)`/`fully_shard(...)` (all-gathers at the first
    forward, `fsdp/_fully_shard/_fully_shard.py:115`), `torch.distributed.checkpoint.save`/`load`
    (`checkpoint/state_dict_saver.py:487` `reduce_scatter`), and DeepSpeed's
    `deepspeed.zero.GatheredParameters(...)` (`runtime/zero/partition_parameters.py:2474` `all_gather`).
    Iterating a shuffled DataLoader that `accelerator.prepare` wrapped (`for batch in loader:`,
    `next(iter(loader))`) broadcasts its shuffling generator's state first (`DataLoaderShard.__iter__`,
    `data_loader.py:579`); a torchmetrics metric's forward (`metric(preds, target)`) syncs when it was
    made with `dist_sync_on_step=True`; and `compute()` of a metric whose list state has no
    `dist_reduce_fx` gathers it one element per `update()`, so updates that run a different number of
    times on different ranks are flagged at the `compute()`. A `compute()` returns its cached value
    without syncing when no `update()` ran since its last call (unless the metric was made with
    `compute_with_cache=False`): in a loop whose updates of the metric run on some ranks only, the
    `compute()` is flagged. Lightning's `fabric.save()` and `trainer.save_checkpoint()` write on
    global rank 0 alone and then wait at a barrier: called in a `try` whose handler catches a failed
    write (`OSError`, `Exception`, a bare `except`) and does not raise again, they are flagged, since
    rank 0 alone would go on past the barrier the others wait in.

    What an object is, is read from the code: a class's bases (`class M(L.LightningModule)`:
    `self.log`, `self.all_gather`, `self.trainer.save_checkpoint`), a Lightning callback hook's
    parameters (`on_validation_end(self, trainer, pl_module)`), a constructor (`fabric = Fabric(...)`,
    `self.fabric = Fabric(...)`, `trainer = Trainer(...)`), an annotation (`metric: Metric`), and what
    a framework object hands out (`self.trainer` is a Trainer). Calling a `DistributedDataParallel`
    wrapper (`ddp = DDP(model)`, `self.model = DDP(model)`, then `ddp(x)`) runs its forward, which
    broadcasts the module's buffers (`nn/parallel/distributed.py:1782` `_sync_buffers`) unless it was
    made with `broadcast_buffers=False` or `forward_sync_buffers=False` (a copy of the wrapper,
    `copy.deepcopy(ddp)` or `AveragedModel(ddp)`, is one too). Without grad (`with torch.no_grad():`,
    `@torch.no_grad()`) it does so only on the first forward after one with grad (line 1841 clears
    `require_forward_param_sync`): a validation loop of it runs the broadcast once, however many
    batches each rank has, while a forward on some ranks only still runs it there. A submodule
    called through the module `fabric.setup()` returned (`model.backbone(x)`), in a loop that runs
    `fabric.backward(loss)` and never calls `model(...)` itself, is the original submodule: no
    gradient is all-reduced, and each process trains its own copy. A value logged without
    `sync_dist=True` (`self.log("val_loss", loss)`) that a ReduceLROnPlateau of
    `configure_optimizers` monitors is each process's own, and so is the learning rate it sets:
    the replicas drift apart. So does a module
    FSDP2 shards in place (`fully_shard(model)`, then `model(x)`: its forward pre-hook all-gathers the parameters,
    `fsdp/_fully_shard/_fsdp_state.py:120`), and its output, like DDP's, is computed from the rank's input;
    a method that calls it
    (`self.validate()` running `self.model(x)`) runs it too, and is flagged where it is called on
    some ranks. `self.model.module(x)`, the module it wraps, runs no collective. `loss.backward()`,
    where `loss` comes from such a forward in the same function (up to five assignments back: a PPO
    loss made from a ratio made from the log-probabilities of `policy(obs)`), runs DDP's
    gradient all-reduce (its reducer's autograd hooks), except inside `with model.no_sync():`. A
    submodule that the `forward` of a class wrapped in DDP without `find_unused_parameters=True` (or
    a LightningModule's `training_step`, and the methods it calls, under a Trainer with a DDP
    strategy) runs only under a test on the step's data, an expert of a `ModuleList` skipped by `if
    not sel.any(): continue` too, gets no gradient on that step: that process's next forward fails
    with "Expected to have finished reduction in the prior iteration" (mmdetection3d#488,
    Megatron-LM#4851); so does a submodule whose output `forward` returns as one item of a tuple
    (`return self.head(h), self.proj(h)`) that only such a test puts into the loss (`if conf > 0.5:
    loss = loss + mse(feat, t)`), reported at the backward. Failing that, a few calls are
    recognised by the receiver's name: a name containing `accelerator` (or assigned `Accelerator(...)`)
    for Accelerate's `save_state`, `load_state`, `get_state_dict`, `save_model`, `prepare`,
    `prepare_model`; `trainer` (or a `...Trainer(...)`) for transformers' `save_model` and Lightning's
    `save_checkpoint`; `engine` or `deepspeed` (or the first item `deepspeed.initialize(...)`
    returns) for DeepSpeed's `save_checkpoint` and `load_checkpoint`. A call on `self` in a class
    that derives from no mapped class is not judged: it is the framework's own code, or a subclass's.
    `fabric.load(path)` reads the file on every rank before its barrier: where `fabric.save` (rank 0
    alone writes) saved the same path in the same function and the path differs between ranks (a run
    directory named after each process's clock), the other ranks find no file and fail. So with
    accelerate's `save_state` (the main process alone writes the model) and `load_state`. A
    torchmetrics metric made with `dist_sync_on_step=True` checks each rank's batch in `update()`
    before its sync: called in a `try` whose handler swallows what the check raises, a rank whose
    batch it rejects skips the sync the others wait in.
    transformers' `TrainingArguments.should_save` and `should_log` are rank tests (`process_index == 0`)
    where the receiver is a TrainingArguments: `self.args` in a `Trainer` subclass, a `TrainerCallback`
    hook's `args`, an annotation, `TrainingArguments(...)`, or its place in
    `HfArgumentParser((..., TrainingArguments)).parse_args_into_dataclasses()`; a callback's
    `control.should_save` is the same on every rank and is none. Setting a flag of that
    `control` in a `TrainerCallback` hook (`control.should_training_stop = True`, and
    `should_epoch_stop`, `should_log`, `should_evaluate`, `should_save`) is a call of its own: the
    process's Trainer leaves its loop, gathers the loss, evaluates or saves on it, so it is flagged
    where a test that differs between ranks decides it (a rank test, the clock, a rank's own data).
    So is `return None, None, None` in a Trainer subclass's `prediction_step`: the evaluation loop
    gathers the loss, logits and labels of each batch only where they are not None. So is
    `trainer.evaluate()` (or `predict(ds)`) of a dataset each rank made of its own share
    (`eval_dataset=Rows(rows[rank::world_size])`, `ds.shard(num_shards=world_size, index=rank)`):
    the Trainer splits it among the processes again, and where the shares differ in length the
    ranks run a different number of batches, and of gathers. What a class
    keeps of the rank's own batch (`self.last_loss = loss.item()` in a Trainer's `compute_loss`,
    `self.tokens += ...` in the `__call__` of a collator handed as `data_collator=` or `collate_fn=`)
    differs between ranks where another object reads it (`self.trainer.last_loss` in a callback).
    torchmetrics' `compute()` on a metric made with `sync_on_compute=False` runs none, and neither
    does one on some ranks where every rank computed the same metric since its last update (it
    returns the cached value): `val = tracker.compute()` everywhere, then `if rank == 0:
    tracker.best_metric()` (a MetricTracker computes every tracked epoch's metric). A torchmetrics
    `Metric` whose `update()` changes a plain attribute (`self.num_batches += 1`, set in `__init__`
    without `add_state`) that `compute()` reads: only registered states are synced, so each
    process computes with its own value beside the synced ones. So does what a method keeps of its
    process's clock (`self.io_seconds += time.monotonic() - start`), read through another object.
    A metric of the module's own class held in an attribute (`self.hit_rate = HitRate()`) is that
    framework's object, and its states read from outside it (`len(self.hit_rate.hits) > 0`,
    `update_count`) are each rank's own until `compute()` syncs them. A DDP backward of a loss
    from the rank's own batch in a `try` whose handler goes on fails on that rank alone (a NaN
    under anomaly detection, out of memory) unless the ranks agreed on the loss first; ZeRO's
    `step` under `with Join([model]):` still broadcasts where `Join` does not name the optimizer.
    Module-level framework functions named like a collective (`ignite.distributed.barrier`,
    `mmengine.dist.all_reduce`) are collectives, reported by BCL005.

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
        # gradients all-reduced at the last micro-batch of each rank's own, once per step on every rank (blind51)
        Valid("import contextlib\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
              "def f(shard, steps):\n    model = DDP(torch.nn.Linear(1, 1))\n    for step in range(steps):\n"
              "        micro = [m for m in shard[rank::2] if m]\n        for i, batch in enumerate(micro):\n"
              "            ctx = contextlib.nullcontext() if i == len(micro) - 1 else model.no_sync()\n"
              "            with ctx:\n                model(batch).sum().backward()"),
        # Accelerate's LocalSGD enters the model's no_sync(): a backward skipped on a non-finite loss
        # all-reduces nothing, and every rank still calls its step().
        Valid("""
            import math
            from accelerate.local_sgd import LocalSGD
            def train(model, opt, loader):
                model, opt, loader = accelerator.prepare(model, opt, loader)
                with LocalSGD(accelerator=accelerator, model=model, local_sgd_steps=3) as local_sgd:
                    for xb, yb in loader:
                        loss = torch.nn.functional.mse_loss(model(xb), yb)
                        if math.isfinite(loss.item()):
                            accelerator.backward(loss)
                            opt.step()
                            opt.zero_grad()
                        local_sgd.step()
            """),
        # The pruning callback's metric is logged with sync_dist=True: every rank tests the same value and
        # raises together; and a training_step that raises on a non-finite loss that nothing catches
        # fails its process, which the launcher sees.
        Valid("""
            import lightning.pytorch as pl
            class Pruned(Exception):
                pass
            class Pruning(pl.Callback):
                def on_validation_end(self, trainer, pl_module):
                    if trainer.callback_metrics["val_loss"] > 1.0:
                        raise Pruned()
            class Model(pl.LightningModule):
                def training_step(self, batch, index):
                    loss = self.net(batch).mean()
                    if not torch.isfinite(loss):
                        raise FloatingPointError("the loss is not finite")
                    return loss
                def validation_step(self, batch, index):
                    self.log("val_loss", self.net(batch).mean(), sync_dist=True)
            def run(model, loader):
                trainer = pl.Trainer(strategy="ddp", callbacks=[Pruning()])
                try:
                    trainer.fit(model, loader, loader)
                except Pruned:
                    return None
                return trainer
            """),
        # A handler that returns None where the work of its 'try' fails alike on every rank: a hyper-
        # parameter the module may lack.
        Valid("""
            import lightning.pytorch as pl
            import torch.nn.functional as F
            class Detector(pl.LightningModule):
                def training_step(self, batch, index):
                    x, y = batch
                    try:
                        weight = float(os.environ["LOSS_WEIGHT"])
                    except KeyError:
                        return None
                    return weight * F.cross_entropy(self.net(x), y)
            """),
        # A loss helper whose empty-batch return keeps the model's graph: every rank's backward reaches
        # every parameter (a look-alike of pytorch#23425).
        Valid("""
            import torch.nn.functional as F
            def supcon(emb, labels):
                same = labels[:, None] == labels[None, :]
                if not same.any():
                    return emb.sum() * 0.0
                return -(emb @ emb.T)[same].mean()
            def train(model, opt, loader):
                model, opt, loader = accelerator.prepare(model, opt, loader)
                for x, labels in loader:
                    loss = supcon(F.normalize(model(x), dim=1), labels)
                    accelerator.backward(loss)
                    opt.step()
            """),
        # A new zero under a test of the configuration, alike on every rank; and one added to a loss the
        # model computes, which keeps the graph.
        Valid("""
            import torch.nn.functional as F
            from torch.nn.parallel import DistributedDataParallel as DDP
            USE_AUX = False
            def aux_loss(out, target):
                if not USE_AUX:
                    return torch.zeros((), requires_grad=True)
                return out.pow(2).mean()
            def masked(out, target):
                keep = target >= 0
                if not keep.any():
                    return torch.tensor(0.0)
                return F.cross_entropy(out[keep], target[keep])
            def train(model, loader, opt):
                ddp = DDP(model)
                for x, target in loader:
                    loss = aux_loss(ddp(x), target)
                    loss.backward()
                    out = ddp(x)
                    total = masked(out, target)
                    total += F.cross_entropy(out, target.clamp(min=0))
                    total.backward()
                    opt.step()
            """),
        # The distillation term in the loss at every step, weighted by zero where the teacher is
        # unsure: the projector gets a gradient (zero) at every step.
        Valid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            class Student(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = torch.nn.Linear(6, 4)
                    self.proj = torch.nn.Linear(6, 5)
                def forward(self, h):
                    return self.head(h), self.proj(h)
            student = DDP(Student())
            teacher = torch.nn.Linear(6, 5)
            g = torch.Generator().manual_seed(rank)
            for _ in range(8):
                x, y = torch.randn(4, 6, generator=g), torch.randint(0, 4, (4,), generator=g)
                teacher_feat = teacher(x)
                conf = teacher_feat.softmax(-1).max().item()
                logits, feat = student(x)
                alpha = 0.5 if conf > 0.5 else 0.0
                loss = torch.nn.functional.cross_entropy(logits, y) + alpha * (feat - teacher_feat).pow(2).mean()
                loss.backward()
            """),
        # Local SGD over a loader every rank holds as many batches of.
        Valid("""
            from accelerate.local_sgd import LocalSGD
            def train(model, loader):
                loader = accelerator.prepare(loader)
                with LocalSGD(accelerator=accelerator, model=model, local_sgd_steps=4) as local_sgd:
                    for x in loader:
                        accelerator.backward(model(x).sum())
                        local_sgd.step()
            """),
        # A helper whose True and False follow a decision the ranks agreed on (a spike anywhere
        # rolls back everywhere): the caller's branch is taken on every rank alike.
        Valid("""
            from lightning.fabric import Fabric
            def rollback_if_spiking(fabric, loss, ema):
                spiking = torch.tensor(float(ema is not None and loss > 10 * ema))
                if fabric.all_reduce(spiking, reduce_op="max").item() > 0:
                    return True
                return False
            def main():
                fabric = Fabric()
                g = torch.Generator().manual_seed(20 + fabric.global_rank)
                xs = torch.randn(6, 8, generator=g)
                model = fabric.setup(torch.nn.Linear(8, 1))
                ema = None
                for x in xs:
                    loss = model(x).pow(2).mean()
                    if rollback_if_spiking(fabric, loss.item(), ema):
                        continue
                    fabric.backward(loss)
                    ema = loss.item()
            """),
        # Every expert runs at every step, its rows masked: no parameter goes without a gradient.
        Valid("""
            import lightning as L
            class MoE(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.experts = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(2))
                def training_step(self, batch, batch_idx):
                    route = batch.sum(-1).long() % 2
                    out = torch.zeros_like(batch)
                    for e, expert in enumerate(self.experts):
                        out = out + expert(batch) * (route == e).unsqueeze(-1)
                    return out.sum()
            def main():
                L.Trainer(strategy="ddp", devices=2).fit(MoE())
            """),
        # The DDP strategy told that some parameters may go unused.
        Valid("""
            import lightning as L
            from lightning.pytorch.strategies import DDPStrategy
            class MoE(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.experts = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(2))
                def training_step(self, batch, batch_idx):
                    route = batch.sum(-1).long() % 2
                    out = torch.zeros_like(batch)
                    for e, expert in enumerate(self.experts):
                        if not (route == e).any():
                            continue
                        out = out + expert(batch[route == e]).sum()
                    return out.sum()
            def main():
                trainer = L.Trainer(strategy=DDPStrategy(find_unused_parameters=True), devices=2)
                trainer.fit(MoE())
            """),
        # A type test of a norm of the rank's own gradients: what it is, alike on every rank.
        Valid("""
            from torch.distributed.tensor import DTensor
            def step(model, loss):
                loss.backward()
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                if isinstance(norm, DTensor):
                    norm = norm.full_tensor()
                return norm
            """),
        # The check follows the backward that syncs: every rank tests the same average.
        Valid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            def grads_finite(model):
                return all(bool(torch.isfinite(p.grad).all()) for p in model.parameters())
            def train(batches):
                model = DDP(torch.nn.Linear(4, 1))
                for x, y in batches:
                    with model.no_sync():
                        loss = (model(x) - y).pow(2).mean()
                        loss.backward()
                    loss = (model(y) - x).pow(2).mean()
                    loss.backward()
                    if not grads_finite(model):
                        break
            """),
        # Every rank's environment seeded alike: the episode is as long everywhere.
        Valid("""
            import random
            from torch.nn.parallel import DistributedDataParallel as DDP
            class Env:
                def __init__(self, seed):
                    self.rng = random.Random(seed)
                def step(self):
                    return self.rng.random() < 0.2
            def train():
                policy = DDP(torch.nn.Linear(4, 1))
                env = Env(seed=1000)
                done = False
                while not done:
                    policy(torch.ones(4)).sum().backward()
                    done = env.step()
            """),
        # Every rank computes the epoch's metric first: rank 0's best_metric reads cached values.
        # Every rank gathers the full state dict; only the saving is on rank 0.
        # The same decision, agreed by the strategy before the save.
        # The counter registered as a state; a plain attribute that update() only reads.
        # Windows of a permutation of all the rows (alike everywhere), or one row at a time.
        # Batches of a share dealt round-robin: as many on every rank (the shares differ by one row at most).
        # The metric never syncs (made so where the caller makes it).
        # A helper handed the DDP model that never calls it: the loss is not DDP's output.
        # Clipped at every step on every rank; the local rise only printed.
        # The main process's temporary directory, broadcast: every rank checks the one path.
        # Options handed as a name that keep the state sharded: no gather.
        # The same backward once the ranks agreed the loss is finite.
        # The metric computed on every rank, what it counts only printed; its own states read in compute.
        # A helper that builds its rows from a literal table of its own, of an even length: taken as
        # written for the job, as a module's table is, so each rank's share is as long.
        # A loss several assignments from a forward pass of a plain module: no reducer to wait for.
        # Rollouts drawn from a generator every rank seeds alike: the early stop agrees.
        Valid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            def rollout(env_seed):
                g = torch.Generator().manual_seed(env_seed)
                return torch.randn(64, 4, generator=g)
            def update(epochs):
                policy = DDP(torch.nn.Linear(4, 2))
                obs = rollout(1000)
                for epoch in range(epochs):
                    kl = policy(obs).pow(2).mean().item()
                    if kl > 0.02:
                        break
                    loss = policy(obs).sum()
                    loss.backward()
            """),
        Valid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            def update(net, obs, old_logp, advantages):
                policy = net
                logp = torch.log_softmax(policy(obs), -1)[:, 0]
                ratio = (logp - old_logp).exp()
                clipped = torch.clamp(ratio, 0.8, 1.2)
                loss = -torch.min(ratio * advantages, clipped * advantages).mean()
                if rank == 0:
                    loss.backward()
            """),
        Valid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            def make_rows():
                lengths = [12, 10, 8, 20, 14, 9]
                return [torch.ones(n) for n in lengths]
            def train(model, world):
                ddp = DDP(model)
                for x in make_rows()[rank::world]:
                    ddp(x).sum().backward()
            """),
        Valid(_HIT_RATE
              + "        rate = self.hit_rate.compute()\n        if len(self.hit_rate.hits) > 0:\n"
              "            print(rate)\n        self.log('hit', rate)"),
        Valid("from torch.distributed.algorithms.join import Join\n"
              "from torch.distributed.optim import ZeroRedundancyOptimizer\n"
              "from torch.nn.parallel import DistributedDataParallel as DDP\ndef f(model):\n"
              "    model = DDP(model)\n"
              "    opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.SGD)\n"
              "    with Join([model, opt]):\n        for x in load(rank):\n            model(x).sum().backward()\n"
              "            opt.step()"),
        Valid("from torch.nn.parallel import DistributedDataParallel as DDP\n"
              "def f(model, loader, opt):\n    model = DDP(model)\n    for x, y in loader:\n"
              "        loss = ((model(x) - y) ** 2).mean()\n        bad = torch.tensor(float(not torch.isfinite(loss)))\n"
              "        dist.all_reduce(bad)\n        if bad.item() > 0:\n            continue\n        try:\n"
              "            loss.backward()\n        except RuntimeError:\n            continue\n        opt.step()"),
        Valid("""
            from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
            def export(model):
                if dist.get_rank() == 0:
                    sharded = StateDictOptions(cpu_offload=True)
                    return get_model_state_dict(model, options=sharded)
            """),
        Valid("""
            import tempfile
            import lightning as L
            class StageAndPublish(L.Callback):
                def on_train_end(self, trainer, pl_module):
                    stage = trainer.strategy.broadcast(tempfile.mkdtemp())
                    path = os.path.join(stage, "final.ckpt")
                    trainer.save_checkpoint(path)
                    if not os.path.isfile(path):
                        trainer.save_checkpoint(path)
            """),
        # A temporary path of each process's own that nobody wrote yet: every rank finds it missing.
        Valid("""
            import tempfile
            import lightning as L
            class Stage(L.Callback):
                def on_train_end(self, trainer, pl_module):
                    path = os.path.join(tempfile.mkdtemp(), "final.ckpt")
                    if not os.path.isfile(path):
                        trainer.save_checkpoint(path)
            """),
        Valid("from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
              "def train(net, loader, opt):\n    model = FSDP(net)\n    previous = 1e9\n"
              "    for x, y in loader:\n        loss = (model(x) - y).pow(2).mean()\n        loss.backward()\n"
              "        if loss.item() > previous:\n            print('rising')\n        previous = loss.item()\n"
              "        model.clip_grad_norm_(1.0)\n        opt.step()"),
        Valid("import torch.nn.functional as F\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
              "def step_loss(model, x, y):\n    return F.mse_loss(x, y) * len(list(model.parameters()))\n"
              "def train(net, loader, opt):\n    model = DDP(net)\n    for x, y in loader:\n"
              "        loss = step_loss(model, x, y)\n        if not torch.isfinite(loss):\n            continue\n"
              "        loss.backward()\n        opt.step()"),
        # Where training stood, read back from each rank's own checkpoint: every rank saved the same step.
        Valid("import torch.nn.functional as F\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
              "def resume(net, batches, opt):\n    model = DDP(net)\n    state = torch.load(f'ckpt-{rank}.pt')\n"
              "    for i, (x, y) in enumerate(batches):\n        if i < state['global_step']:\n            continue\n"
              "        loss = F.mse_loss(model(x), y)\n        loss.backward()\n        opt.step()"),
        Valid(_FAILED_UPDATE.replace("BinaryF1Score()", "BinaryF1Score(sync_on_compute=False)")),
        Valid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            def train(net, x, y, opt):
                model = DDP(net)
                x, y = x[rank::dist.get_world_size()], y[rank::dist.get_world_size()]
                for start in range(0, len(x), 8):
                    loss = ((model(x[start:start + 8]) - y[start:start + 8]) ** 2).mean()
                    loss.backward()
                    opt.step()
            """),
        Valid(_TAIL_STEP.replace("torch.arange(len(rows)).tensor_split(dist.get_world_size())[rank]",
                                 "torch.randperm(len(rows))")),
        Valid(_TAIL_STEP.replace("idx = shard[start:start + 4]", "idx = shard[start]")),
        Valid("""
            from torchmetrics import Metric
            class MeanBatchRecall(Metric):
                def __init__(self, positive=1):
                    super().__init__()
                    self.add_state("recall_sum", default=torch.tensor(0.0), dist_reduce_fx="sum")
                    self.add_state("num_batches", default=torch.tensor(0), dist_reduce_fx="sum")
                    self.positive = positive
                def update(self, preds, target):
                    hits = (preds == self.positive) & (target == self.positive)
                    self.recall_sum += hits.sum() / (target == self.positive).sum()
                    self.num_batches += 1
                def compute(self):
                    return self.recall_sum / self.num_batches * self.positive
            def main(pairs):
                metric = MeanBatchRecall()
                for preds, target in pairs:
                    metric.update(preds, target)
                score = metric.compute()
                dist.barrier()
            """),
        Valid("""
            import time
            import lightning as L
            class Recordings(torch.utils.data.Dataset):
                def __init__(self, rows):
                    self.rows, self.io_seconds = rows, 0.0
                def __getitem__(self, i):
                    start = time.monotonic()
                    row = load(self.rows[i])
                    self.io_seconds += time.monotonic() - start
                    return row
            class StallCheckpoint(L.Callback):
                def __init__(self, path, budget):
                    self.path, self.budget, self.saved = path, budget, False
                def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
                    stalled = trainer.train_dataloader.dataset.io_seconds > self.budget
                    stalled = trainer.strategy.reduce_boolean_decision(stalled, all=False)
                    if stalled and not self.saved:
                        trainer.save_checkpoint(self.path)
                        self.saved = True
            """),
        Valid("""
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType
            def save(model, path):
                with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):
                    state = model.state_dict()
                if dist.get_rank() == 0:
                    torch.save(state, path)
                    print(other.state_dict())
            """),
        Valid(_TRACKED.replace("        if rank == 0:\n", "        val = tracker.compute()\n        if rank == 0:\n")),
        # One file every rank reads alike.
        Valid(_OWN_FILE.replace("f'shard_{dist.get_rank()}.pt'", "'shard.pt'")),
        # Logged with sync_dist=True: every process monitors the mean; a scheduler that monitors nothing.
        Valid(_PLATEAU.replace("self.net(batch).mean())", "self.net(batch).mean(), sync_dist=True)")),
        Valid(_PLATEAU.replace("ReduceLROnPlateau(opt)", "StepLR(opt, 10)").replace(', "monitor": "val_loss"', "")),
        # The ranks agree on the validation loss before the test.
        Valid(_EARLY_STOP.replace("val = sum(losses) / len(losses)",
                                  "val = accelerator.reduce(torch.tensor(sum(losses)), 'mean').item()")),
        # The step goes through the wrapper; a probe of a submodule with no backward in its loop.
        Valid(_FABRIC_STEPS.replace("feats = model.backbone(x)", "feats = model(x)")),
        Valid(_FABRIC_STEPS.replace("fabric.backward(loss)", "print(loss)")),
        # A helper returning what an all_reduce agreed: the loop's test is the same on every rank.
        Valid("""
            import lightning as L
            def global_mean(fabric, loss):
                return fabric.all_reduce(loss.detach(), reduce_op="mean").item()
            def train(fabric: L.Fabric, model, loader):
                for batch in loader:
                    loss = model(batch)
                    while global_mean(fabric, loss) > 0.5:
                        fabric.backward(loss)
                        loss = model(batch)
            """),
        # A name copied from itself (a parameter bound again): nothing mapped, and no endless look.
        Valid("""
            import copy
            def score(prompts, model):
                prompts = copy.deepcopy(prompts)
                if rank == 0:
                    prompts.save_checkpoint("out")
            """),
        # An AveragedModel of the module the wrapper holds: a plain module, whose forward syncs nothing.
        Valid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            from torch.optim.swa_utils import AveragedModel
            def refresh(model, loader):
                ddp = DDP(model)
                swa = AveragedModel(ddp.module)
                if rank == 0:
                    for x in loader:
                        swa(x)
            """),
        # The same metric synced at the end only: its forward runs no collective to skip.
        Valid("""
            from torchmetrics.classification import MulticlassAccuracy
            def evaluate(model, loader):
                metric = MulticlassAccuracy(num_classes=3)
                for x, y in loader:
                    try:
                        metric(model(x), y)
                    except RuntimeError:
                        continue
                return metric.compute()
            """),

        # The run directory named on the main process and sent to the others before the save.
        Valid("""
            import os, time
            def main(model):
                names = ["run-" + str(time.time_ns())]
                broadcast_object_list(names)
                accelerator.save_state(os.path.join(names[0], "ckpt"))
                accelerator.wait_for_everyone()
                accelerator.load_state(os.path.join(names[0], "ckpt"))
            """),
        # Inside DDP's join a rank out of batches shadows the wrapper's broadcasts and all-reduces
        # (torch distributed/algorithms/join.py): its forward and backward run unevenly by design.
        Valid(_JOINED_STEPS),
        # Validation without grad over shares of different lengths: DDP's forward broadcasts the
        # buffers on the first batch only (after the training forward), which every rank runs.
        Valid("from torch.nn.parallel import DistributedDataParallel as DDP\n"
              "def evaluate(net, rows):\n    model = DDP(net)\n    with torch.no_grad():\n"
              "        for x in rows[dist.get_rank()::3]:\n            print(model(x))\n    dist.barrier()"),
        # A module of layers without buffers: DDP's forward broadcasts nothing (its backward still
        # all-reduces, and runs here as often on every rank: four steps from each rank's offset).
        Valid("from torch.nn.parallel import DistributedDataParallel as DDP\n"
              "def train(rank, rows):\n    model = DDP(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh()))\n"
              "    for i in range(rank * 4, rank * 4 + 4):\n        loss = model(rows[i]).sum()\n        loss.backward()\n"
              "    with torch.no_grad():\n        for x in rows[rank::3]:\n            print(model(x))\n"),
        # The step count is the same on every process: they all save together.
        Valid(_TOKEN_INTERVAL_SAVE.replace("self.tokens_seen >= self.next_save", "self.state.global_step % 50 == 0")),
        # The dataset hands a readable record in place of a bad one: no batch is ever empty.
        Valid(_DROPPING_COLLATOR.replace("                return None\n", "                idx = idx + 1\n", 1)),
        Valid(_JOINED_STEPS.replace("with model.join():", "with Join([model]):")),
        # A collection whose every metric computes without syncing, handed to a helper run on rank 0.
        Valid("""
            from torchmetrics import MetricCollection
            from torchmetrics.classification import MulticlassAccuracy
            def test(model, rows, metrics: MetricCollection):
                for x, y in rows:
                    metrics.update(model(x), y)
                return metrics.compute()
            def main(model, rows):
                metrics = MetricCollection({"acc": MulticlassAccuracy(num_classes=3, sync_on_compute=False)})
                if rank == 0:
                    print(test(model, rows, metrics))
            """),
        # The best-model metric set on every rank; a metric set on the main process that is not it.
        Valid(_BEST_METRIC_ON_MAIN.replace("if gathered is not None:", "if True:")),
        Valid(_BEST_METRIC_ON_MAIN.replace('metric_for_best_model="bench"', 'metric_for_best_model="loss"')),
        # The monitored key is logged on every rank; a key logged on rank 0 alone that no callback monitors.
        Valid(_MONITORED_ON_RANK_ZERO.replace("if self.global_rank == 0:", "if True:")),
        Valid(_MONITORED_ON_RANK_ZERO.replace('monitor="val_auc"', 'monitor="val_loss"')),
        # The whole dataset on every rank: the Trainer shards it once.
        Valid("""
            from transformers import Trainer
            from torch.utils.data import Dataset
            class Rows(Dataset):
                def __init__(self, rows):
                    self.rows = rows
            def main(model, args, rows):
                trainer = Trainer(model=model, args=args, eval_dataset=Rows(rows))
                return trainer.evaluate()
            """),
        # A preview of the loader before accelerate prepares it iterates a plain DataLoader.
        Valid("""
            from torch.utils.data import DataLoader
            def train(model, dataset):
                loader = DataLoader(dataset, batch_size=4, shuffle=True)
                if accelerator.is_main_process:
                    print(next(iter(loader)))
                model, loader = accelerator.prepare(model, loader)
                for batch in loader:
                    accelerator.backward(model(batch).sum())
            """),
        # The project function is handed a metric that does not sync, or the computed value.
        Valid("""
            from torchmetrics.classification import MulticlassConfusionMatrix
            def save_outputs(rows, confusion):
                matrix = confusion.compute()
                write(rows, matrix)
            def evaluate(rank, rows):
                confusion = MulticlassConfusionMatrix(num_classes=3, sync_on_compute=False)
                if rank == 0:
                    save_outputs(rows, confusion)
            """),
        Valid("""
            from torchmetrics.classification import MulticlassConfusionMatrix
            def save_outputs(rows, matrix):
                write(rows, matrix.compute() if hasattr(matrix, "compute") else matrix)
            def evaluate(rank, rows):
                confusion = MulticlassConfusionMatrix(num_classes=3)
                matrix = confusion.compute()
                if rank == 0:
                    save_outputs(rows, matrix)
            """),
        # A training step that returns a loss computed from the model on every path (zero where nothing counts).
        Valid("""
            import lightning.pytorch as pl
            class Detector(pl.LightningModule):
                def training_step(self, batch, index):
                    x, y = batch
                    keep = y >= 0
                    if not keep.any():
                        return self.net(x).sum() * 0
                    return torch.nn.functional.cross_entropy(self.net(x[keep]), y[keep])
            """),
        # A metric object logged on every rank, updated where the batch holds positives; a tensor logged on some.
        Valid("""
            import lightning as L
            from torchmetrics.classification import BinaryRecall
            class Detector(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.recall = BinaryRecall()
                def validation_step(self, batch, index):
                    preds, y = batch
                    if (y == 1).any():
                        self.recall.update(preds[y == 1], y[y == 1])
                        self.log("positives", (y == 1).sum().float())
                    self.log("recall", self.recall, on_epoch=True)
            """),
        # A MetricCollection computed on every rank, its result printed on one.
        Valid("""
            import lightning.pytorch as pl
            from torchmetrics import MetricCollection, MeanAbsoluteError
            class Regressor(pl.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.val_metrics = MetricCollection({"mae": MeanAbsoluteError()})
                def on_validation_end(self):
                    scores = self.val_metrics.compute()
                    if self.trainer.is_global_zero:
                        print(scores)
            """),
        # Metrics computed locally (sync_on_compute=False): a guard that differs between ranks is harmless.
        Valid("""
            from torchmetrics import MeanAbsoluteError
            def evaluate(model, rows, sources):
                metrics = {src: MeanAbsoluteError(sync_on_compute=False) for src in sources}
                for src, x, y in rows[rank::2]:
                    metrics[src].update(model(x), y)
                report = {}
                for src, metric in metrics.items():
                    if metric.update_called:
                        report[src] = metric.compute()
                return report
            """),
        # Lightning hands each rank its share of the loader unless told not to; a sampler of the
        # module's own that cuts the items to a multiple of the world size hands out even shares.
        Valid("""
            import lightning as L
            from torch.utils.data import DataLoader, Sampler
            class Strided(Sampler):
                def __init__(self, n, rank, world):
                    self.indices = list(range(rank, n, world))
                def __iter__(self):
                    return iter(self.indices)
                def __len__(self):
                    return len(self.indices)
            class M(L.LightningModule):
                def train_dataloader(self):
                    return DataLoader(DATA, sampler=Strided(len(DATA), self.global_rank, self.trainer.world_size))
                def training_step(self, batch, batch_idx):
                    loss = self.net(batch).mean()
                    self.log("loss", loss, sync_dist=True)
                    return loss
            def main():
                L.Trainer(devices=2).fit(M())
            """),
        Valid("""
            import lightning as L
            from torch.utils.data import DataLoader, Sampler
            class Strided(Sampler):
                def __init__(self, n, rank, world):
                    usable = n // world * world
                    self.indices = list(range(n))[rank:usable:world]
                def __iter__(self):
                    return iter(self.indices)
                def __len__(self):
                    return len(self.indices)
            class M(L.LightningModule):
                def train_dataloader(self):
                    return DataLoader(DATA, sampler=Strided(len(DATA), self.global_rank, self.trainer.world_size))
                def training_step(self, batch, batch_idx):
                    loss = self.net(batch).mean()
                    self.log("loss", loss, sync_dist=True)
                    return loss
            def main():
                L.Trainer(devices=2, use_distributed_sampler=False).fit(M())
            """),
        # However many micro-batches a rank has, it synchronises once: at its last one.
        Valid("""
            import lightning as L
            SHARDS = {0: [1, 2, 3], 1: [4]}
            def train(fabric: L.Fabric, model):
                chunks = SHARDS[fabric.global_rank]
                for i, chunk in enumerate(chunks):
                    with fabric.no_backward_sync(model, enabled=i < len(chunks) - 1):
                        fabric.backward(model(chunk).sum())
            """),
        # An accumulation length every rank shares: the switch goes alike everywhere.
        Valid("""
            import lightning as L
            def train(fabric: L.Fabric, model, micro, accum):
                for i, x in enumerate(micro):
                    accumulating = (i + 1) % accum != 0
                    with fabric.no_backward_sync(model, enabled=accumulating):
                        fabric.backward(model(x).sum())
            """),
        # The trigger is checked first: the rank over budget set it, so every rank sees it true.
        Valid("""
            LENGTHS = [[6, 5, 7], [12, 14, 11]]
            def batches(lengths):
                for n in lengths:
                    yield torch.randn(n, 4)
            def train():
                seen = 0
                for x in batches(LENGTHS[accelerator.process_index]):
                    seen += x.shape[0]
                    over_budget = seen >= 20
                    if over_budget:
                        accelerator.set_trigger()
                    if accelerator.check_trigger() or over_budget:
                        break
            """),
        # A value made the same on every rank by a collective on a receiver not typed (a helper's
        # `fabric` parameter) decides alike; a structure test on a rank's own batch agrees.
        Valid("""
            import lightning as L
            def validate(fabric, model, loader):
                total = 0.0
                for x in loader:
                    total += model(x).item()
                return fabric.all_reduce(torch.tensor(total))
            class Best:
                def __init__(self, fabric: L.Fabric):
                    self.fabric = fabric
                    self.best = float('inf')
                def update(self, loss, state):
                    if loss >= self.best:
                        return
                    self.best = loss
                    self.fabric.save('best.ckpt', state)
            def fit(fabric, model, val_loader):
                Best(fabric).update(validate(fabric, model, val_loader), {'model': model})
            """),
        Valid("""
            import lightning as L
            class M(L.LightningModule):
                def validation_step(self, batch, batch_idx):
                    if 'labels' in batch:
                        self.log('loss', self(batch), sync_dist=True)
                    if batch_idx == 0:
                        self.log('first', self(batch), sync_dist=True)
            """),
        Valid("""
            from torch.distributed.tensor import DTensor
            def full_state(model):
                return {k: v.full_tensor() if isinstance(v, DTensor) else v for k, v in model.state_dict().items()}
            def export(model, path):
                state = full_state(model)
                if rank == 0:
                    torch.save(state, path)
            """),
        # A torchmetrics metric made with sync_on_compute=False computes its local value: no collective.
        Valid("from torchmetrics import MeanSquaredError\nclass Track:\n    def __init__(self):\n"
              "        self.local = MeanSquaredError(sync_on_compute=False)\n    def show(self):\n"
              "        if rank == 0:\n            print(self.local.compute())"),
        # The preview iterates the plain loader, before prepare(); an unshuffled prepared loader syncs nothing.
        Valid("""
            from torch.utils.data import DataLoader
            def main(ds, model):
                loader = DataLoader(ds, batch_size=2, shuffle=True)
                ordered = accelerator.prepare(DataLoader(ds, batch_size=2))
                if accelerator.is_main_process:
                    for batch in loader:
                        print(batch)
                        break
                    for batch in ordered:
                        print(batch)
                model, loader = accelerator.prepare(model, loader)
                for batch in loader:
                    accelerator.backward(model(batch).sum())
            """),
        # A list state concatenated before its one gather, or a metric that does not sync at all.
        Valid("""
            from torchmetrics import Metric
            class Ranked(Metric):
                def __init__(self):
                    super().__init__()
                    self.add_state("ranked", default=[], dist_reduce_fx="cat")
            class LocalRanked(Metric):
                def __init__(self):
                    super().__init__(sync_on_compute=False)
                    self.add_state("ranked", default=[], dist_reduce_fx=None)
            def evaluate(loader):
                metric, local = Ranked(), LocalRanked()
                for batch in loader:
                    if not batch["relevant"].any():
                        continue
                    metric.update(batch["relevant"])
                    local.update(batch["relevant"])
                return metric.compute(), local.compute()
            """),
        # A torchmetrics metric's forward (`metric(...)`) syncs only when made with dist_sync_on_step=True.
        Valid("""
            from torchmetrics.regression import MeanAbsoluteError
            def evaluate(batches, rank):
                metric = MeanAbsoluteError()
                for preds, target in batches:
                    if rank == 0:
                        metric(preds, target)
                        metric.forward(preds, target)
                return metric.compute()
            """),
        # Under no_sync() DDP's backward all-reduces nothing (gradient accumulation).
        Valid("import torch.nn.functional as F\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
              "def train(net, loader, opt):\n    model = DDP(net)\n    for x, y in loader:\n"
              "        with model.no_sync():\n            loss = F.mse_loss(model(x), y)\n"
              "            if not torch.isfinite(loss):\n                continue\n            loss.backward()"),
        # The loss of a model that is not wrapped: a backward with no collective.
        Valid("import torch.nn.functional as F\ndef train(net, loader, opt):\n    for x, y in loader:\n"
              "        loss = F.mse_loss(net(x), y)\n        if not torch.isfinite(loss):\n            continue\n"
              "        loss.backward()"),
        # Read on every rank.
        Valid("import lightning as L\nclass Report(L.Callback):\n    def on_fit_end(self, trainer, pl_module):\n"
              "        path = trainer.log_dir\n        if trainer.is_global_zero:\n            print(path)"),
        # What the constructions hand the object is a plain optimizer: no collective inside.
        Valid("class Saver:\n    def __init__(self, optimizer):\n"
              "        self.optimizer, self.writer = optimizer, dist.get_rank() == 0\n    def save(self):\n"
              "        if self.writer:\n            self.optimizer.consolidate_state_dict(to=0)\n"
              "def main(params):\n    Saver(torch.optim.Adam(params)).save()"),
        Valid("from torchmetrics.classification import MulticlassAccuracy\n"
              "def log(preds, target):\n    acc = MulticlassAccuracy(num_classes=3)\n    acc.update(preds, target)\n"
              "    value = acc.compute()\n    if dist.get_rank() == 0:\n        print(value)"),
        # Every rank gathers the full state dict; only the main process writes it.
        Valid("from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
              "def save(net, path):\n    model = FSDP(net)\n    state = model.state_dict()\n"
              "    if dist.get_rank() == 0:\n        torch.save(state, path)"),
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
        Valid("from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = torch.nn.Linear(2, 2)\n"
              "if accelerator.num_processes > 1:\n    model = DDP(model)"),
        Valid("class MyTrainer:\n    def save(self, out):\n        if self.is_world_process_zero():\n"
              "            self.save_model(out)"),
        # Lightning: logging without sync_dist, or with sync_dist=False, is local; so is a
        # rank_zero_only method that logs without it, and a logger's own `log`.
        Valid("""
            import lightning as L
            class M(L.LightningModule):
                def validation_step(self, batch, i):
                    loss = self(batch)
                    if self.global_rank == 0:
                        self.log('val', loss)
                    self.log('val_sync', loss, sync_dist=True)
            """),
        Valid("""
            import lightning as L
            class M(L.LightningModule):
                def validation_step(self, batch, i):
                    if self.trainer.is_global_zero:
                        self.log('val', batch, sync_dist=False, rank_zero_only=True)
                        self.logger.log('x', 1)
                        self.print('logged')
            """),
        Valid("""
            from lightning.pytorch.utilities import rank_zero_only
            import lightning as L
            class M(L.LightningModule):
                @rank_zero_only
                def report(self, x):
                    self.log('x', x)
            """),
        # The collective on every rank, main-process work under the guard.
        Valid("""
            from lightning.pytorch.callbacks import Callback
            class Save(Callback):
                def on_validation_end(self, trainer, pl_module):
                    trainer.save_checkpoint('best.ckpt')
                    if trainer.is_global_zero:
                        print(trainer.callback_metrics)
            """),
        Valid("""
            from lightning.fabric import Fabric
            fabric = Fabric()
            if fabric.global_rank == 0:
                fabric.print('saving')
            fabric.barrier()
            fabric.save('ckpt', {})
            """),
        Valid("""
            from transformers import Trainer
            def run(model, args):
                trainer = Trainer(model=model, args=args)
                metrics = trainer.evaluate()
                if trainer.is_world_process_zero():
                    trainer.save_metrics('eval', metrics)
            """),
        # main_process_first() runs its barriers on every rank: entering the block (or a second one
        # in the same `with`) is no call on some ranks (accelerate's test_script.py, trl's utils.py).
        Valid("""
            from accelerate import PartialState
            def f():
                state = PartialState()
                with state.main_process_first(), state.local_main_process_first():
                    print('cache written once')
                with accelerator.main_process_first():
                    print('then the others')
            """),
        # Without full_state_dict, get_model_state_dict gathers nothing.
        Valid("""
            from torch.distributed.checkpoint.state_dict import get_model_state_dict
            def f(model, rank):
                if rank == 0:
                    return get_model_state_dict(model)
            """),
        # A module FSDP2 shards in place, run by every rank the same number of times; a module
        # whose submodule alone is sharded, run on rank 0 (its own forward gathers nothing).
        Valid("""
            import torch.distributed as dist
            from torch.distributed.fsdp import fully_shard
            def decode(model, ids, steps):
                for _ in range(steps):
                    ids = model(ids).argmax(-1)
                return ids
            def main(model, prompts):
                fully_shard(model)
                out = decode(model, prompts[dist.get_rank()], 4)
                if dist.get_rank() == 0:
                    print(out)
            """),
        Valid("""
            import torch.distributed as dist
            from torch.distributed.fsdp import fully_shard
            def main(model, probe, x):
                fully_shard(model)
                if dist.get_rank() == 0:
                    print(probe(x))
            """),
        # A run directory every rank shares: named by rank 0 and broadcast, or fixed by the config.
        Valid("""
            from datetime import datetime
            from pathlib import Path
            from lightning.fabric import Fabric
            class Config:
                def __init__(self):
                    self.out = Path("runs") / datetime.now().strftime("%H%M%S%f")
            def main(state):
                fabric = Fabric(devices=2, strategy="ddp")
                cfg = Config()
                cfg.out = Path(fabric.broadcast(str(cfg.out), src=0))
                fabric.save(cfg.out / "best.ckpt", state)
                fabric.load(cfg.out / "best.ckpt", state)
            """),
        Valid("""
            from pathlib import Path
            from lightning.fabric import Fabric
            def main(state, name):
                fabric = Fabric(devices=2, strategy="ddp")
                out = Path("runs") / name
                fabric.save(out / "best.ckpt", state)
                fabric.load(out / "best.ckpt", state)
            """),
        # torchmetrics' gather helper on every rank, its result printed on the main process.
        Valid("from torchmetrics.utilities.distributed import gather_all_tensors\n"
              "def f(x):\n    everything = gather_all_tensors(x)\n    if dist.get_rank() == 0:\n"
              "        print(everything)"),
        # A metric per language, made up front for every language the job knows: each rank computes all.
        Valid("""
            from torchmetrics.classification import MulticlassAccuracy
            LANGS = ["en", "de", "fr"]
            class Report:
                def __init__(self):
                    self.metrics = {lang: MulticlassAccuracy(num_classes=3) for lang in LANGS}
                def update(self, langs, preds, target):
                    for lang in set(langs):
                        self.metrics[lang].update(preds, target)
                def compute(self):
                    return {lang: m.compute() for lang, m in sorted(self.metrics.items())}
            """),
        # A DistributedDataParallel forward on every rank; or made without buffer broadcasts.
        Valid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            def step(model, x, rank):
                ddp = DDP(model)
                out = ddp(x)
                if rank == 0:
                    print(out)
            """),
        Valid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            def probe(model, x, rank):
                ddp = DDP(model, broadcast_buffers=False)
                if rank == 0:
                    return ddp(x)
            """),
        # Through a method, rank 0 only: the unwrapped module, a wrapper made without buffer
        # broadcasts evaluated under no_grad (its forward then runs no collective), a plain module.
        Valid("""
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            class Trainer:
                def __init__(self, net):
                    self.rank = dist.get_rank()
                    self.model = DDP(net)
                @torch.no_grad()
                def validate(self, x):
                    return self.model.module(x).mean().item()
                def fit(self, x):
                    if self.rank == 0:
                        print(self.validate(x))
                    dist.barrier()
            """),
        Valid("""
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            class Trainer:
                def __init__(self, net):
                    self.rank = dist.get_rank()
                    self.model = DDP(net, broadcast_buffers=False)
                @torch.no_grad()
                def validate(self, x):
                    return self.model(x).mean().item()
                def fit(self, x):
                    if self.rank == 0:
                        print(self.validate(x))
                    dist.barrier()
            """),
        Valid("""
            import torch
            import torch.distributed as dist
            class Trainer:
                def __init__(self):
                    self.rank = dist.get_rank()
                    self.model = torch.nn.Linear(4, 1)
                def validate(self, x):
                    return self.model(x).mean().item()
                def fit(self, x):
                    if self.rank == 0:
                        print(self.validate(x))
                    dist.barrier()
            """),
        Valid("""
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            def probe(model, x, rank):
                ddp_model = DDP(model, forward_sync_buffers=False)
                if rank == 0:
                    with torch.no_grad():
                        return ddp_model(x)
            """),
        # TrainerControl.should_save is the same on every rank; an untyped `should_save` says nothing.
        Valid("""
            from transformers import TrainerCallback
            class SaveState(TrainerCallback):
                def __init__(self, accelerator):
                    self.accelerator = accelerator
                def on_step_end(self, args, state, control, **kwargs):
                    if control.should_save:
                        self.accelerator.save_state(args.output_dir)
            """),
        Valid("""
            def f(cfg, accelerator):
                if cfg.should_save:
                    accelerator.save_state('ckpt')
            """),
        Valid("""
            from transformers import HfArgumentParser, TrainingArguments
            def main(accelerator, ModelArguments):
                model_args, training_args = HfArgumentParser((ModelArguments, TrainingArguments)).parse_args_into_dataclasses()
                if model_args.should_save:
                    accelerator.save_state(training_args.output_dir)
            """),
        # Methods named like collectives on objects that are none.
        Valid("""
            def f(out, rank, index, ax, dataset):
                if rank == 0:
                    y = out.gather(1, index)
                    ax.scatter(y, y)
                    dataset.prepare()
                    return y
            """),
        # A TrainerCallback's control flags set where every process decides alike: a step count, a
        # shared stop file, a NaN test all-reduced first, the logged (gathered) loss; `control` of a
        # class that is no TrainerCallback; a flag set to a computed value.
        Valid("""
            import os
            import torch
            import torch.distributed as dist
            from transformers import TrainerCallback
            class MaxSteps(TrainerCallback):
                def on_step_end(self, args, state, control, **kwargs):
                    if state.global_step >= 100:
                        control.should_training_stop = True
            class StopFile(TrainerCallback):
                def __init__(self, path):
                    self.path = path
                def on_step_end(self, args, state, control, **kwargs):
                    if os.path.exists(self.path):
                        control.should_training_stop = True
            class AgreedNan(TrainerCallback):
                def on_step_end(self, args, state, control, model=None, **kwargs):
                    bad = torch.tensor(float(any(torch.isnan(p).any() for p in model.parameters())))
                    dist.all_reduce(bad, op=dist.ReduceOp.MAX)
                    if bad.item() > 0:
                        control.should_training_stop = True
            class LossGuard(TrainerCallback):
                def on_log(self, args, state, control, logs=None, **kwargs):
                    if logs and logs.get("loss", 0.0) > 10.0:
                        control.should_training_stop = True
            """),
        Valid("""
            import time
            from transformers import TrainerCallback
            class Budget:
                def on_step_end(self, args, state, control):
                    if time.time() > self.deadline:
                        control.should_training_stop = True
            class Best(TrainerCallback):
                def on_evaluate(self, args, state, control, metrics=None, **kwargs):
                    control.should_save = state.is_world_process_zero
            """),
        # compute() in a loop whose update runs on every rank, or after the loop, or of a metric made
        # with compute_with_cache=False (it syncs at every call), or updated on a schedule alike
        # everywhere: every rank syncs at the same calls.
        Valid("""
            import torch
            from torchmetrics.regression import MeanSquaredError
            def every_step(loader, model):
                mse = MeanSquaredError()
                for x, y in loader:
                    keep = ~torch.isnan(y)
                    mse.update(model(x)[keep], y[keep])
                    print(mse.compute())
            def no_cache(loader, model):
                mse = MeanSquaredError(compute_with_cache=False)
                for x, y in loader:
                    if (~torch.isnan(y)).any():
                        mse.update(model(x), y)
                    print(mse.compute())
            def after(loader, model):
                mse = MeanSquaredError()
                for x, y in loader:
                    if (~torch.isnan(y)).any():
                        mse.update(model(x), y)
                return mse.compute()
            def scheduled(loader, model, every):
                mse = MeanSquaredError()
                for step, (x, y) in enumerate(loader):
                    if step % every == 0:
                        mse.update(model(x), y)
                    print(mse.compute())
            """),
        # A save whose failure every rank meets: the handler raises again, or catches what no write
        # raises.
        Valid("""
            from lightning.fabric import Fabric
            def train(fabric: Fabric, state, path):
                try:
                    fabric.save(path, state)
                except OSError:
                    fabric.print('checkpoint failed')
                    raise
                try:
                    fabric.save(path, state)
                except KeyError:
                    pass
            """),
        # prediction_step returning None where every process decides alike (prediction_loss_only), or
        # in a class that is no Trainer.
        Valid("""
            from transformers import Trainer
            class LossOnly(Trainer):
                def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
                    loss, logits, labels = super().prediction_step(model, inputs, prediction_loss_only, ignore_keys)
                    if prediction_loss_only:
                        return loss, None, None
                    return loss, logits, labels
            class Scorer:
                def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
                    if (inputs["labels"] == -100).all():
                        return None, None, None
                    return 1, 2, 3
            """),
        # What the Trainer and the collator keep is the same on every rank: a count of calls.
        Valid("""
            from transformers import Trainer, TrainerCallback
            class CountingTrainer(Trainer):
                calls = 0
                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                    self.calls += 1
                    return model(**inputs).loss
            class Collator:
                def __init__(self):
                    self.batches = 0
                def __call__(self, features):
                    self.batches += 1
                    return features
            class Every(TrainerCallback):
                def __init__(self, collator):
                    self.collator, self.trainer = collator, None
                def on_step_end(self, args, state, control, **kwargs):
                    if self.trainer.calls > 100 or self.collator.batches > 100:
                        control.should_training_stop = True
            def main(model, args, data):
                collator = Collator()
                guard = Every(collator)
                trainer = CountingTrainer(model=model, args=args, train_dataset=data, data_collator=collator,
                                          callbacks=[guard])
                guard.trainer = trainer
            """),
        # The same decision on a metric logged with sync_dist=True, on one this module never logs, and
        # on a torchmetrics object (it syncs when computed): every rank reads the same value.
        Valid("""
            from lightning.pytorch import Callback, LightningModule
            class Net(LightningModule):
                def validation_step(self, batch, batch_idx):
                    self.log("val_loss", self.loss_of(batch), on_epoch=True, sync_dist=True)
                    self.log_dict({"val_acc": self.accuracy})
            class SaveBest(Callback):
                best = float("inf")
                def on_validation_epoch_end(self, trainer, pl_module):
                    if float(trainer.callback_metrics["val_loss"]) < self.best:
                        trainer.save_checkpoint("best.ckpt")
                    if trainer.callback_metrics.get("val_acc", 0) > 0.9:
                        trainer.save_checkpoint("accurate.ckpt")
                    if trainer.logged_metrics["train_loss"] < 0.1:
                        trainer.save_checkpoint("low.ckpt")
            """),
        # -1 at a step every rank counts alike, after the flag went through all_gather, and from a
        # Callback (Lightning reads the module's answer only).
        Valid("""
            from lightning.pytorch import Callback, LightningModule
            class Net(LightningModule):
                def on_train_batch_start(self, batch, batch_idx):
                    if batch_idx >= self.hparams.steps_per_epoch:
                        return -1
                    if self.all_gather((batch["labels"] == -100).all()).any():
                        return -1
            class Skip(Callback):
                def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
                    if (batch["labels"] == -100).all():
                        return -1
            """),
        # The same head under find_unused_parameters=True, behind a test of whether labels were
        # passed, run at every step besides, or in a class that is not wrapped.
        Valid("""
            import torch
            from torch import nn
            from torch.nn.parallel import DistributedDataParallel as DDP
            class TwoStage(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.backbone, self.refine, self.cls = nn.Linear(4, 8), nn.Linear(8, 4), nn.Linear(8, 2)
                def forward(self, x, has_box, labels=None):
                    h = self.backbone(x)
                    loss = self.refine(h).mean() * 0
                    if has_box.any():
                        loss = loss + self.refine(h[has_box]).mean()
                    if labels is not None:
                        loss = loss + self.cls(h).mean()
                    return loss
            class Gated(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = nn.Linear(8, 4)
                def forward(self, x):
                    return self.head(x) if x.sum() > 0 else x
            model = DDP(TwoStage())
            gated = DDP(Gated(), find_unused_parameters=True)
            plain = Gated()
            """),
        # The same read where nothing is logged with sync_dist=True for the epoch (a training step
        # logs for the step), and the read on every rank before the test.
        Valid("""
            from lightning.pytorch import Callback, LightningModule
            class Net(LightningModule):
                def training_step(self, batch, batch_idx):
                    self.log("train_loss", self.loss_of(batch), sync_dist=True)
                    self.log("lr", self.lr)
            class CsvLogger(Callback):
                def on_validation_epoch_end(self, trainer, pl_module):
                    if trainer.is_global_zero:
                        print(dict(trainer.callback_metrics))
            """),
        Valid("""
            from lightning.pytorch import Callback, LightningModule
            class Net(LightningModule):
                def validation_step(self, batch, batch_idx):
                    self.log("val_loss", self.loss_of(batch), sync_dist=True)
            class CsvLogger(Callback):
                def on_validation_epoch_end(self, trainer, pl_module):
                    metrics = dict(trainer.callback_metrics)
                    if trainer.is_global_zero:
                        print(metrics)
            """),
        # Debug mode on every rank, or on none, whatever the list of ranks to watch says.
        Valid("""
            import os
            from accelerate import Accelerator
            DEBUG_RANKS = [r for r in os.environ.get("DEBUG_RANKS", "").split(",") if r]
            if DEBUG_RANKS:
                os.environ["ACCELERATE_DEBUG_MODE"] = "1"
            def main(loader, model):
                accelerator = Accelerator()
                for batch in loader:
                    print(accelerator.reduce(model(batch).detach()))
            """),
        # The same skip decided together, a skip under automatic optimization (Lightning counts the
        # optimizer_step hook's calls), and one with nothing keyed on global_step.
        Valid("""
            from lightning.pytorch import LightningModule, Trainer
            from lightning.pytorch.callbacks import ModelCheckpoint
            class Agreed(LightningModule):
                automatic_optimization = False
                def training_step(self, batch, batch_idx):
                    x, labelled = batch
                    opt = self.optimizers()
                    self.manual_backward(self.loss(x, labelled))
                    if self.trainer.strategy.reduce_boolean_decision(bool(labelled.any()), all=False):
                        opt.step()
            class Automatic(LightningModule):
                def training_step(self, batch, batch_idx):
                    x, labelled = batch
                    opt = self.optimizers()
                    if labelled.any():
                        opt.step()
            trainer = Trainer(callbacks=[ModelCheckpoint(every_n_train_steps=2)])
            """),
        Valid("""
            from lightning.pytorch import LightningModule
            class SemiSupervised(LightningModule):
                automatic_optimization = False
                def training_step(self, batch, batch_idx):
                    x, labelled = batch
                    opt = self.optimizers()
                    self.manual_backward(self.loss(x, labelled))
                    if labelled.any():
                        opt.step()
            """),
        # The same skip decided on every rank together (the flag all-reduced first).
        Valid("""
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            def train(model, loader, opt):
                model = DDP(model)
                for batch in loader:
                    loss = model(batch).mean()
                    bad = torch.tensor(float(not torch.isfinite(loss)))
                    dist.all_reduce(bad)
                    if bad.item() > 0:
                        continue
                    loss.backward()
                    opt.step()
            """),
        # The same guard deciding with every rank first, and a stop at an epoch every rank counts.
        Valid("""
            import torch
            from lightning.pytorch import Callback
            class DivergenceGuard(Callback):
                def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
                    loss = outputs["loss"].detach()
                    diverged = not torch.isfinite(loss) or loss > 100.0
                    if trainer.strategy.reduce_boolean_decision(diverged, all=False):
                        trainer.should_stop = True
                def on_train_epoch_end(self, trainer, pl_module):
                    if trainer.current_epoch >= 3:
                        trainer.should_stop = True
            """),
    )
    INVALID = (
        # Rank 0 alone computes (and syncs) every tracked epoch's metric.
        Invalid(_TRACKED, expected_message="tracker.best_metric(), which runs each tracked metric's compute() and its "
                "sync() inside (torchmetrics 1.9.0), runs only on ranks where 'rank == 0' is true: the other "
                "ranks never join it and every rank hangs until the timeout",
                range=(10, 19, 10, 40)),
        # Each rank's file holds its own number of rows.
        Invalid(_OWN_FILE, expected_message="model.forward(), which broadcasts the module's buffers in pre_forward() "
                "(torch 2.13.0), runs a different number of times on different ranks: the loop at line 13 "
                "iterates over 'range(0, len(data), 8)', whose length can differ between ranks (it is read from a "
                "file named after the rank: the rank's own data), so the ranks' calls stop pairing up and every "
                "rank hangs until the timeout",
                range=(6, 9, 6, 29)),
        # Each process steps its plateau scheduler with its own validation loss.
        Invalid(_PLATEAU, expected_message="self.log('val_loss', ...) logs this process's own value (no sync_dist=True), "
                "and the ReduceLROnPlateau of configure_optimizers monitors 'val_loss' (line 17): Lightning steps "
                "it with each process's own value (lightning 2.6.6, loops/training_epoch_loop.py:491), so each "
                "process lowers its learning rate on its own epochs and the replicas drift apart, with no error",
                range=(5, 9, 5, 53)),
        # Each rank breaks on its own validation loss: the others' next backward has no partner.
        Invalid(_EARLY_STOP, expected_message="accelerator.backward(), which runs the gradient all_reduce() of DDP's "
                "reducer inside (accelerate 1.15.0), is skipped in the following iterations on ranks where 'best "
                "is not None and val > best' is true (it is computed from this rank's own batch of data): the "
                "'break' at line 19 is taken only there, while the other ranks go on calling it, so the ranks' "
                "calls stop pairing up and every rank hangs until the timeout",
                range=(5, 13, 5, 47)),
        # Submodules looked up on Fabric's wrapper are the original ones: DDP never sees the step.
        Invalid(_FABRIC_STEPS, expected_message="model.backbone() runs the original submodule, not the "
                "DistributedDataParallel wrapper that fabric.setup() made of 'model' (lightning 2.6.6, "
                "fabric/wrappers.py:244 hands the original module's attributes through): no forward of the step "
                "goes through the wrapper, so fabric.backward() all-reduces no gradient and each process trains "
                "its own copy, with no error",
                range=(6, 17, 6, 34)),
        # The same validation with grad on: every forward broadcasts the buffers.
        Invalid("from torch.nn.parallel import DistributedDataParallel as DDP\n"
                "def evaluate(net, rows):\n    model = DDP(net)\n"
                "    for x in rows[dist.get_rank()::3]:\n        print(model(x))\n    dist.barrier()",
                expected_message="model.forward(), which broadcasts the module's buffers in pre_forward() "
                "(torch 2.13.0), runs a different number of times on different ranks: the loop at line 12 "
                "iterates over 'rows[dist.get_rank()::3]', whose length depends on the rank, so the ranks' calls "
                "stop pairing up and every rank hangs until the timeout",
                range=(5, 15, 5, 23)),
        # With a BatchNorm the same evaluation loop broadcasts its buffers at every forward.
        Invalid("from torch.nn.parallel import DistributedDataParallel as DDP\n"
                "def evaluate(rank, rows):\n    model = DDP(torch.nn.Sequential(torch.nn.Linear(4, 8), "
                "torch.nn.BatchNorm1d(8)))\n    for x in rows[rank::3]:\n        print(model(x))\n",
                expected_message="model.forward(), which broadcasts the module's buffers in pre_forward() "
                "(torch 2.13.0), runs a different number of times on different ranks: the loop at line 12 "
                "iterates over 'rows[rank::3]', whose length depends on the rank, so the ranks' calls stop "
                "pairing up and every rank hangs until the timeout",
                range=(5, 15, 5, 23)),
        Invalid(_TOKEN_INTERVAL_SAVE, expected_message="self.control.should_save, which makes this process's Trainer save a "
                "checkpoint, which runs save_model() and a barrier (transformers 5.25.0, trainer.py:2322), is set "
                "only on ranks where 'self.tokens_seen >= self.next_save' is true (it is computed from this "
                "rank's own batch of data): the other processes' Trainers go on without it, and every rank hangs "
                "until the timeout",
                range=(9, 13, 9, 37)),
        Invalid(_DROPPING_COLLATOR,
                expected_message="drop_bad() collates this process's batches and returns None where 'not "
                "samples' holds (it is computed from this rank's own batch of data): the Trainer skips a None "
                "batch on that process only (lightning 2.6.6, loops/training_epoch_loop.py:330), so its gradient "
                "all-reduce for the step never starts while the other processes wait in it, and every rank hangs "
                "until the timeout",
                range=(13, 9, 13, 20)),
        # The same uneven steps outside the join: the forward's broadcast pairs with nothing.
        Invalid(_JOINED_STEPS.replace("    with model.join():\n", "    if True:\n")
                .replace("            loss.backward()\n", ""),
                expected_message="model.forward(), which broadcasts the module's buffers in pre_forward() "
                "(torch 2.13.0), runs a different number of times on different ranks: the loop at line 16 "
                "iterates over 'x.split(8)', whose length can differ between ranks (it holds the data of the rank "
                "it was given), so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(9, 20, 9, 32)),
        # A detached zero loss for a batch without targets (pytorch-lightning#12190).
        Invalid("""
            import lightning.pytorch as pl
            class Detector(pl.LightningModule):
                def training_step(self, batch, index):
                    x, y = batch
                    keep = y >= 0
                    if not keep.any():
                        return torch.tensor(0.0, requires_grad=True)
                    return torch.nn.functional.cross_entropy(self.net(x[keep]), y[keep])
            """, expected_message="training_step() returns 'torch.tensor(0.0, requires_grad=True)', a new tensor "
                "that no parameter reaches, only where 'not keep.any()' holds (it is computed from this rank's own "
                "batch of data): the Trainer's backward through DistributedDataParallel all-reduces each gradient "
                "as the parameters get one, which never happens on those ranks, so the others wait in the gradient "
                "all-reduce and every rank hangs until the timeout", range=(7, 13, 7, 57)),
        # The metric a Trainer picks the best model by, set in a callback on the main process alone.
        Invalid(_BEST_METRIC_ON_MAIN, expected_message="'metrics[\"eval_bench\"]' is set only on ranks where "
                "'gathered is not None' is true, and after each evaluation the Trainer looks up "
                "metric_for_best_model='bench' on every rank (_determine_best_metric, transformers 5.25.0): the "
                "other ranks raise KeyError while these go on to the next collective", range=(7, 13, 7, 66)),
        # A key logged on rank 0 alone that a ModelCheckpoint of the module monitors
        # (pytorch-lightning#15852): the other ranks raise where it is missing.
        Invalid(_MONITORED_ON_RANK_ZERO, expected_message="self.log(), which logs the key 'val_auc' that "
                "ModelCheckpoint (line 16) looks up on every rank after validation, failing where it is missing, "
                "before reduce_boolean_decision() (lightning 2.6.6), runs only on ranks where 'self.global_rank == 0' "
                "is true: the other ranks never join it and every rank hangs until the timeout (those ranks run log "
                "(line 14) only, while the others run no collective here)", range=(6, 13, 6, 47),
                expected_replacement=textwrap.dedent(_MONITORED_ON_RANK_ZERO).strip("\n").replace(
                    '        self.log("val_auc", compute_auc())\n',
                    '        pass\n        self.log("val_auc", compute_auc())\n')),
        # A metric object logged only where the batch holds positives (pytorch-lightning#20223).
        Invalid("""
            import lightning as L
            from torchmetrics.classification import BinaryRecall
            class Detector(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.recall = BinaryRecall()
                def validation_step(self, batch, index):
                    preds, y = batch
                    if (y == 1).any():
                        self.recall(preds[y == 1], y[y == 1])
                        self.log("recall", self.recall, on_epoch=True)
            """, expected_message="self.log(), which runs the logged metric's compute() inside (lightning 2.6.6), "
                "runs only on ranks where '(y == 1).any()' is true (it is computed from this rank's own batch of data): "
                "the other ranks never join it and every rank hangs until the timeout (those ranks run log (line 19) "
                "only, while the others run no collective here)", range=(11, 13, 11, 59)),
        # A project function handed a metric computes it: calling the function syncs (hi-ml#261).
        Invalid("""
            from torchmetrics.classification import MulticlassConfusionMatrix
            def save_outputs(rows, confusion):
                matrix = confusion.compute()
                write(rows, matrix)
            def evaluate(rank, rows):
                confusion = MulticlassConfusionMatrix(num_classes=3)
                if rank == 0:
                    save_outputs(rows, confusion)
            """, expected_message="save_outputs(), which calls confusion.compute() (case.py:11), which runs sync() "
                "inside (torchmetrics 1.9.0), runs only on ranks where 'rank == 0' is true: the other ranks never "
                "join it and every rank hangs until the timeout (those ranks run save_outputs (line 16) only, while "
                "the others run no collective here)", range=(8, 9, 8, 38),
                expected_replacement="from torchmetrics.classification import MulticlassConfusionMatrix\n"
                "def save_outputs(rows, confusion):\n    matrix = confusion.compute()\n    write(rows, matrix)\n"
                "def evaluate(rank, rows):\n    confusion = MulticlassConfusionMatrix(num_classes=3)\n"
                "    if rank == 0:\n        pass\n    save_outputs(rows, confusion)"),
        # MetricCollection.compute computes (and syncs) each member metric (torchmetrics#2684).
        Invalid("""
            import lightning.pytorch as pl
            from lightning.pytorch.utilities import rank_zero_only
            from torchmetrics import MetricCollection, MeanAbsoluteError
            class Regressor(pl.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.val_metrics = MetricCollection({"mae": MeanAbsoluteError()})
                @rank_zero_only
                def on_validation_end(self):
                    print(self.val_metrics.compute())
            """, expected_message="self.val_metrics.compute(), which runs each metric's compute() and its sync() "
                "inside (torchmetrics 1.9.0), is called in 'on_validation_end', which @rank_zero_only runs on some "
                "ranks only: the other ranks never join it and every rank hangs until the timeout",
                range=(10, 15, 10, 41)),
        # Each rank hands the Trainer its own share, which it splits again: a different number of gathers.
        Invalid("from transformers import Trainer\nfrom torch.utils.data import Dataset\nclass Rows(Dataset):\n"
                "    def __init__(self, rows):\n        self.rows = rows\ndef main(model, args, rows):\n"
                "    trainer = Trainer(model=model, args=args, eval_dataset=Rows(rows[rank::world_size]))\n"
                "    return trainer.evaluate()",
                expected_message="trainer.evaluate(), which runs evaluation_loop() inside (transformers "
                "5.25.0), gathers the outputs of every batch, and its eval_dataset 'Rows(rows[rank::world_size])' "
                "holds a different number of items on each rank (each rank takes every world-th item from its "
                "rank on, and the shares differ by one item unless they divide evenly): the Trainer splits each "
                "rank's share among the processes again, so the ranks run a different number of batches and every "
                "rank hangs until the timeout",
                range=(8, 12, 8, 30)),
        Invalid("from transformers import Trainer\ndef main(model, args, ds):\n"
                "    trainer = Trainer(model=model, args=args)\n"
                "    return trainer.predict(ds.shard(num_shards=world_size, index=rank))",
                expected_message="trainer.predict(), which runs evaluation_loop() inside (transformers 5.25.0), "
                "gathers the outputs of every batch, and its test_dataset 'ds.shard(num_shards=world_size, "
                "index=rank)' holds a different number of items on each rank (each rank takes its own share of the "
                "items, and the shares differ in length unless they divide evenly): the Trainer splits each rank's "
                "share among the processes again, so the ranks run a different number of batches and every rank "
                "hangs until the timeout", range=(4, 12, 4, 72)),
        # Iterating a shuffled loader accelerate prepared broadcasts its generator's state first.
        Invalid("""
            from torch.utils.data import DataLoader
            def train(model, dataset):
                loader = DataLoader(dataset, batch_size=4, shuffle=True)
                model, loader = accelerator.prepare(model, loader)
                if accelerator.is_main_process:
                    print(next(iter(loader)))
                for batch in loader:
                    accelerator.backward(model(batch).sum())
            """, expected_message="iter(), which runs synchronize_rng_states() of accelerate's "
                "prepared DataLoader inside, a broadcast of its shuffling generator (accelerate 1.15.0), runs only on "
                "ranks where 'accelerator.is_main_process' is true: the other ranks never join it and every rank hangs "
                "until the timeout (those ranks run prepare (line 12) then iter (line 14), while the others run "
                "prepare (line 12) only)", range=(6, 20, 6, 32)),
        # One metric per source, updated with the rank's own rows: `update_called` differs between
        # ranks, and compute() synchronises only where it is true.
        Invalid("""
            from torchmetrics import MeanAbsoluteError
            def evaluate(model, rows, sources):
                metrics = {src: MeanAbsoluteError() for src in sources}
                for src, x, y in rows[rank::2]:
                    metrics[src].update(model(x), y)
                report = {}
                for src, metric in metrics.items():
                    if metric.update_called:
                        report[src] = metric.compute()
                return report
            """, expected_message="metric.compute(), which runs sync() inside (torchmetrics 1.9.0), "
                "runs only on ranks where 'metric.update_called' is true (it holds the data of the rank it was given): "
                "the other ranks never join it and every rank hangs until the timeout", range=(9, 27, 9, 43)),
        # A per-batch hook runs once per batch of the module's own loader, kept as it is made.
        Invalid("""
            import lightning as L
            from torch.utils.data import DataLoader, Sampler
            class Strided(Sampler):
                def __init__(self, n, rank, world):
                    self.indices = list(range(rank, n, world))
                def __iter__(self):
                    return iter(self.indices)
                def __len__(self):
                    return len(self.indices)
            class M(L.LightningModule):
                def train_dataloader(self):
                    return DataLoader(DATA, sampler=Strided(len(DATA), self.global_rank, self.trainer.world_size))
                def training_step(self, batch, batch_idx):
                    loss = self.net(batch).mean()
                    self.log("loss", loss, sync_dist=True)
                    return loss
            def main():
                L.Trainer(devices=2, use_distributed_sampler=False).fit(M())
            """, expected_message="self.log(), which runs strategy.reduce() inside (lightning 2.6.6), runs a different number of times on "
                "different ranks: Lightning calls 'training_step' once per batch of 'train_dataloader()', whose length "
                "can differ between ranks (each rank takes its own share of the items, and the shares differ in length "
                "unless they divide evenly), so the ranks' calls stop pairing up and every rank hangs until the timeout", range=(15, 9, 15, 47)),
        # Each rank's own accumulation length decides when no_backward_sync lets backward synchronise.
        Invalid("""
            import lightning as L
            SEQ_LEN = [32, 16]
            def train(fabric: L.Fabric, model, micro):
                accum = 64 // SEQ_LEN[fabric.global_rank]
                for i, x in enumerate(micro):
                    accumulating = (i + 1) % accum != 0
                    with fabric.no_backward_sync(model, enabled=accumulating):
                        fabric.backward(model(x).sum())
            """, expected_message="fabric.backward(), which runs strategy.backward() inside "
                "(lightning 2.6.6), synchronises the gradients only on ranks where 'accumulating' is false "
                "('fabric.no_backward_sync' switches it off elsewhere), and 'accumulating' can differ between ranks "
                "(it holds the data of the rank it was given), so the ranks' calls stop pairing up and every rank "
                "hangs until the timeout", range=(8, 13, 8, 44)),
        # `or` skips the right operand where the left is true: a rank over its own token budget
        # (its entry of the table, through a generator's items) never joins check_trigger().
        Invalid("""
            LENGTHS = [[6, 5, 7], [12, 14, 11]]
            def batches(lengths):
                for n in lengths:
                    yield torch.randn(n, 4)
            def train():
                seen = 0
                for x in batches(LENGTHS[accelerator.process_index]):
                    seen += x.shape[0]
                    over_budget = seen >= 20
                    if over_budget:
                        accelerator.set_trigger()
                    if over_budget or accelerator.check_trigger():
                        break
            """, expected_message="accelerator.check_trigger(), which runs reduce() inside "
                "(accelerate 1.15.0), is skipped on ranks where 'over_budget' is true: 'or' does not evaluate it "
                "there, and 'over_budget' can differ between ranks (it holds the data of the rank it was given), "
                "so the ranks' calls stop pairing up and every rank hangs until the timeout", range=(12, 27, 12, 54)),
        # A method whose class holds a Fabric (an annotated parameter) returns early on a value
        # that differs between ranks: reported on the collective it skips.
        Invalid("""
            import lightning as L
            class Best:
                def __init__(self, fabric: L.Fabric):
                    self.fabric = fabric
                    self.best = float('inf')
                def update(self, loss, state):
                    if loss >= self.best:
                        return
                    self.best = loss
                    self.fabric.save('best.ckpt', state)
            def validate(model, loader):
                total = 0.0
                for x in loader:
                    total += model(x).item()
                return total
            def fit(fabric, model, val_loader):
                Best(fabric).update(validate(model, val_loader), {'model': model})
            """, expected_message="self.fabric.save(), which runs strategy.save_checkpoint() inside (lightning 2.6.6), "
                "runs only where 'loss >= self.best' is false: update() returns before it otherwise, and its call at "
                "line 25 passes 'validate(model, val_loader)' as 'loss', which can differ between ranks ('validate()' "
                "returns what it computed from this rank's own data), so the ranks' calls stop pairing up and every "
                "rank hangs until the timeout", range=(10, 9, 10, 45)),
        # Lightning hands a step its rank's own batch.
        Invalid("""
            import lightning as L
            class M(L.LightningModule):
                def validation_step(self, batch, batch_idx):
                    x, y = batch
                    if y.sum() > 0:
                        self.log('positive', self(x), sync_dist=True)
            """, expected_message="self.log(), which runs strategy.reduce() inside (lightning 2.6.6), runs only on "
                "ranks where 'y.sum() > 0' is true (it is computed from this rank's own batch of data): "
                f"{_HANG} (those ranks run log (line 14) only, while the others run no collective here)",
                range=(6, 13, 6, 58)),
        # An attribute set from outside the class (`callback.trainer = trainer`) is typed too.
        Invalid("""
            from transformers import Trainer, TrainerCallback
            class Samples(TrainerCallback):
                def __init__(self):
                    self.trainer = None
                def on_evaluate(self, args, state, control, **kwargs):
                    if not state.is_world_process_zero:
                        return
                    self.trainer.predict(self.samples)
            def main(model, args):
                callback = Samples()
                trainer = Trainer(model=model, args=args, callbacks=[callback])
                callback.trainer = trainer
                trainer.train()
            """, expected_message="self.trainer.predict(), which runs evaluation_loop() inside (transformers 5.25.0), "
                f"runs only on ranks where 'state.is_world_process_zero' is true: {_HANG} (those ranks run predict "
                "(line 16) only, while the others run no collective here)", range=(8, 9, 8, 43)),
        # `isinstance(v, DTensor)` says what `v` is; the helper's call is what the main rank runs.
        Invalid("""
            from torch.distributed.tensor import DTensor
            def full_state(model):
                return {k: v.full_tensor() if isinstance(v, DTensor) else v for k, v in model.state_dict().items()}
            def export(model, path):
                if rank == 0:
                    torch.save(full_state(model), path)
            """, expected_message="full_state(), which calls v.full_tensor() (case.py:11), which runs "
                "funcol.all_gather_single() inside (torch 2.13.0), runs only on ranks where 'rank == 0' is true: "
                f"{_HANG} (those ranks run full_state (line 14) only, while the others run no collective here)",
                range=(6, 20, 6, 37)),
        # A loop over a prepared, shuffled loader starts with a broadcast: on the main process only, a hang.
        Invalid("""
            from torch.utils.data import DataLoader
            def main(ds, model):
                loader = DataLoader(ds, batch_size=2, shuffle=True)
                model, loader = accelerator.prepare(model, loader)
                if accelerator.is_main_process:
                    for batch in loader:
                        print(batch)
                        break
                for batch in loader:
                    accelerator.backward(model(batch).sum())
            """, expected_message="iterating 'loader' runs synchronize_rng_states() of accelerate's prepared "
                "DataLoader inside, a broadcast of its shuffling generator (accelerate 1.15.0), and runs only on "
                "ranks where 'accelerator.is_main_process' is true: the other ranks never join it and every rank "
                "hangs until the timeout", range=(6, 22, 6, 28)),
        # A list state without a reduction is gathered one element per update(); the updates differ.
        Invalid("""
            from torchmetrics import Metric
            class Ranked(Metric):
                def __init__(self):
                    super().__init__()
                    self.add_state("ranked", default=[], dist_reduce_fx=None)
                def update(self, relevant):
                    self.ranked.append(relevant)
                def compute(self):
                    return torch.cat(self.ranked).mean()
            def evaluate(loader):
                metric = Ranked()
                for batch in loader:
                    if not batch["relevant"].any():
                        continue
                    metric.update(batch["relevant"])
                return metric.compute()
            """, expected_message="metric.compute(), which runs sync() inside (torchmetrics 1.9.0), gathers the list "
                "state 'ranked' one element at a time (it has no dist_reduce_fx), one element per update, and the "
                "update at line 23 runs a different number of times on different ranks (it is computed from this "
                "rank's own batch of data), so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout", range=(16, 12, 16, 28)),
        # A torchmetrics metric made with dist_sync_on_step=True syncs in each forward (`metric(...)`).
        Invalid("""
            from torchmetrics.regression import MeanAbsoluteError
            def evaluate(batches):
                metric = MeanAbsoluteError(dist_sync_on_step=True)
                for preds, target in batches:
                    if rank == 0:
                        metric(preds, target)
                return metric.compute()
            """, expected_message="metric.forward(), which syncs the batch's metric states across ranks (it was "
                "made with dist_sync_on_step=True) (torchmetrics 1.9.0), runs only on ranks where 'rank == 0' is "
                f"true: {_HANG}", range=(6, 13, 6, 34), expected_replacement=(
                "from torchmetrics.regression import MeanAbsoluteError\ndef evaluate(batches):\n"
                "    metric = MeanAbsoluteError(dist_sync_on_step=True)\n    for preds, target in batches:\n"
                "        if rank == 0:\n            pass\n        metric(preds, target)\n    return metric.compute()")),
        # DDP's backward all-reduces the gradients; a rank whose loss is not finite skips it.
        Invalid("import torch.nn.functional as F\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
                "def train(net, loader, opt):\n    model = DDP(net)\n    for x, y in loader:\n"
                "        loss = F.mse_loss(model(x), y)\n        if not torch.isfinite(loss):\n            continue\n"
                "        loss.backward()\n        opt.step()",
                expected_message="loss.backward(), which runs the gradient all_reduce() of DDP's reducer inside "
                "(torch 2.13.0), is skipped on ranks where 'torch.isfinite(loss)' is false (it is computed from this "
                "rank's own batch of data): the 'continue' at line 16 is taken only there, while the other ranks go "
                "on calling it, so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(9, 9, 9, 24)),
        # A property that runs a collective (Trainer.log_dir broadcasts the directory), read on rank zero.
        Invalid("import lightning as L\nclass Report(L.Callback):\n    def on_fit_end(self, trainer, pl_module):\n"
                "        if trainer.is_global_zero:\n            print(trainer.log_dir)",
                expected_message="trainer.log_dir, which runs strategy.broadcast() inside (lightning 2.6.6), runs only "
                "on ranks where 'trainer.is_global_zero' is true: the other ranks never join it and every rank hangs "
                "until the timeout (those ranks run log_dir (line 13) only, while the others run no collective here)",
                range=(5, 19, 5, 34)),
        # What an object's attribute is, from what its constructions pass (`self.optimizer = optimizer`).
        Invalid("from torch.distributed.optim import ZeroRedundancyOptimizer\nclass Saver:\n"
                "    def __init__(self, optimizer):\n        self.optimizer, self.writer = optimizer, dist.get_rank() == 0\n"
                "    def save(self):\n        if self.writer:\n            self.optimizer.consolidate_state_dict(to=0)\n"
                "def main(params):\n    Saver(ZeroRedundancyOptimizer(params, torch.optim.Adam)).save()",
                expected_message="self.optimizer.consolidate_state_dict(), which runs broadcast_object() inside "
                "(torch 2.13.0), runs only on ranks where 'self.writer' is true: the other ranks never join it and "
                "every rank hangs until the timeout (those ranks run consolidate_state_dict (line 15) only, while the "
                "others run no collective here)", range=(7, 13, 7, 56),
                expected_replacement="from torch.distributed.optim import ZeroRedundancyOptimizer\nclass Saver:\n"
                "    def __init__(self, optimizer):\n        self.optimizer, self.writer = optimizer, dist.get_rank() == 0\n"
                "    def save(self):\n        if self.writer:\n            pass\n"
                "        self.optimizer.consolidate_state_dict(to=0)\n"
                "def main(params):\n    Saver(ZeroRedundancyOptimizer(params, torch.optim.Adam)).save()"),
        Invalid("from torchmetrics.classification import MulticlassAccuracy\n"
                "def log(preds, target):\n    acc = MulticlassAccuracy(num_classes=3)\n    acc.update(preds, target)\n"
                "    if dist.get_rank() == 0:\n        print(acc.compute())",
                expected_message="acc.compute(), which runs sync() inside (torchmetrics 1.9.0), runs only on ranks "
                "where 'dist.get_rank() == 0' is true: the other ranks never join it and every rank hangs until the "
                "timeout (those ranks run compute (line 14) only, while the others run no collective here)",
                range=(6, 15, 6, 28)),
        Invalid("from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
                "def save(net, path):\n    model = FSDP(net)\n    if dist.get_rank() == 0:\n"
                "        torch.save(model.state_dict(), path)",
                expected_message="model.state_dict(), which runs _unshard_fsdp_state_params() inside (torch 2.13.0), "
                "runs only on ranks where 'dist.get_rank() == 0' is true: the other ranks never join it and every "
                "rank hangs until the timeout (those ranks run FullyShardedDataParallel (line 11) then state_dict "
                "(line 13), while the others run FullyShardedDataParallel (line 11) only)", range=(5, 20, 5, 38)),
        # A metric made the first time a language shows up in the rank's own rows: as many computes as it saw.
        Invalid("from torchmetrics.classification import MulticlassAccuracy\nLANGS = ['en', 'de', 'fr', 'en']\n"
                "class Report:\n    def __init__(self):\n        self.metrics = {}\n"
                "    def update(self, langs, preds, target):\n        for lang in set(langs):\n"
                "            metric = self.metrics.setdefault(lang, MulticlassAccuracy(num_classes=3))\n"
                "            metric.update(preds, target)\n"
                "    def compute(self):\n        return {lang: m.compute() for lang, m in sorted(self.metrics.items())}\n"
                "def main(preds, target):\n    report = Report()\n    report.update(LANGS[rank::2], preds, target)\n"
                "    print(report.compute())",
                expected_message="m.compute(), which runs sync() inside (torchmetrics 1.9.0), runs a different number "
                "of times on different ranks: the loop at line 19 iterates over 'sorted(self.metrics.items())', whose "
                "length can differ between ranks (line 22 passes 'LANGS[rank::2]', and it holds the data of the rank "
                "it was given), so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(11, 23, 11, 34)),
        # The same loop on a helper that returns the rank's own loss: each rank stops on its own.
        Invalid("""
            import lightning as L
            def local_value(fabric, loss):
                return loss.detach().item()
            def train(fabric: L.Fabric, model, loader):
                for batch in loader:
                    loss = model(batch)
                    while local_value(fabric, loss) > 0.5:
                        fabric.backward(loss)
                        loss = model(batch)
            """, expected_message="fabric.backward(), which runs strategy.backward() inside (lightning 2.6.6), "
                "runs a different number of times on different ranks: the loop at line 15 runs while "
                "'local_value(fabric, loss) > 0.5' holds, which can differ between ranks (it is computed from "
                "this rank's own batch of data), so the ranks' calls stop pairing up and every rank hangs until "
                "the timeout",
                range=(8, 13, 8, 34)),
        # A metric synced at every step, its rejected batches skipped by a handler on that rank alone.
        Invalid("""
            from torchmetrics.classification import MulticlassAccuracy
            def evaluate(model, loader):
                metric = MulticlassAccuracy(num_classes=3, dist_sync_on_step=True)
                for x, y in loader:
                    try:
                        metric(model(x), y)
                    except RuntimeError:
                        continue
                return metric.compute()
            """, expected_message="metric.forward(), which syncs the batch's metric states across ranks (it was "
                "made with dist_sync_on_step=True) (torchmetrics 1.9.0), checks the rank's own batch in update() "
                "before that sync (metric.py:344, :345), and the handler at line 15 lets a rank whose batch it "
                "rejects skip the sync the other ranks wait in: every rank hangs until the timeout",
                range=(6, 13, 6, 32)),
        # accelerate alike: save_state writes the model on the main process alone, load_state reads everywhere.
        Invalid("""
            import os, time
            def run_dir():
                return "run-" + time.strftime("%H%M%S") + str(time.time_ns())
            def main(model):
                out = run_dir()
                accelerator.save_state(os.path.join(out, "ckpt"))
                accelerator.wait_for_everyone()
                accelerator.load_state(os.path.join(out, "ckpt"))
            """, expected_message="accelerator.load_state(), which runs load_fsdp_model() inside (accelerate "
                "1.15.0), reads 'os.path.join(out, \"ckpt\")' on every rank (checkpointing.py:247), but that path "
                "differs between ranks ('run_dir()' returns something else on some ranks, as it reads the clock, "
                "which differs between ranks) and accelerator.save_state() at line 14 wrote the model there on "
                "the main process alone (checkpointing.py:114): the other ranks find no file there and fail, and "
                "the main process waits in its next collective until the timeout",
                range=(8, 5, 8, 54)),
        # Each process names the run directory after its own clock; rank 0 alone saves into its own.
        Invalid("""
            from datetime import datetime
            from pathlib import Path
            from lightning.fabric import Fabric
            def main(state):
                fabric = Fabric(devices=2, strategy="ddp")
                out = Path("runs") / datetime.now().strftime("%H%M%S%f")
                fabric.save(out / "best.ckpt", state)
                fabric.load(out / "best.ckpt", state)
            """, expected_message="fabric.load(), which runs strategy.load_checkpoint() inside (lightning 2.6.6), "
                "reads 'out / \"best.ckpt\"' on every rank, then waits at a barrier (fabric/fabric.py:909, :915), but "
                "that path differs between ranks (it reads the clock, which differs between ranks) and fabric.save() "
                "at line 15 wrote it on global rank 0 alone: the other ranks find no file there and fail before the "
                "barrier, where rank 0 waits until the timeout", range=(8, 5, 8, 42)),
        # torchmetrics' own gather helper, called on the main process only.
        Invalid("from torchmetrics.utilities.distributed import gather_all_tensors\n"
                "def f(x):\n    if dist.get_rank() == 0:\n        return gather_all_tensors(x)",
                expected_message="gather_all_tensors(), which runs torch.distributed.barrier() inside (torchmetrics "
                "1.9.0), runs only on ranks where 'dist.get_rank() == 0' is true: the other ranks never join it and "
                "every rank hangs until the timeout (those ranks run gather_all_tensors (line 12) only, while the "
                "others run no collective here)", range=(4, 16, 4, 37)),
        # FSDP2: the decoding loop stops when the rank's own rows are done, each forward all-gathers.
        Invalid("from torch.distributed.fsdp import fully_shard\nPROMPTS = [[[1, 6]], [[2, 3]]]\n"
                "def decode(model, ids):\n    done = ids[:, -1] == 0\n    while not done.all():\n"
                "        done |= model(ids).argmax(-1) == 0\n    return ids\n"
                "def main(model):\n    fully_shard(model)\n    decode(model, torch.tensor(PROMPTS[dist.get_rank()]))",
                expected_message="model.forward(), which all-gathers the sharded parameters in a forward pre-hook "
                "(torch 2.13.0), runs a different number of times on different ranks: the loop at line 13 runs while "
                "'not done.all()' holds, which can differ between ranks (line 18 passes "
                "'torch.tensor(PROMPTS[dist.get_rank()])', and it holds the data of the rank it was given), so the "
                "ranks' calls stop pairing up and every rank hangs until the timeout", range=(6, 17, 6, 27)),
        Invalid("if accelerator.is_main_process:\n    accelerator.save_state('ckpt')",
                expected_message="accelerator.save_state(), which runs wait_for_everyone() inside (accelerate 1.15.0), "
                f"runs only on ranks where 'accelerator.is_main_process' is true: {_HANG}"
                " (those ranks run save_state (line 10) only, while the others run no collective here)",
                range=(2, 5, 2, 35),
                expected_replacement="if accelerator.is_main_process:\n    pass\naccelerator.save_state('ckpt')"),
        Invalid("def f(model_engine):\n    if rank == 0:\n        model_engine.save_checkpoint('ckpt')\n"
                "        print('saved')",
                expected_message="model_engine.save_checkpoint(), which runs dist.barrier() inside (deepspeed 0.19.8), "
                f"runs only on ranks where 'rank == 0' is true: {_HANG}"
                " (those ranks run save_checkpoint (line 11) only, while the others run no collective here)",
                range=(3, 9, 3, 45)),
        Invalid("def f(trainer, out):\n    if trainer.is_world_process_zero():\n        trainer.save_model(out)",
                expected_message="trainer.save_model(), which runs accelerator.get_state_dict() inside (transformers "
                f"5.25.0), runs only on ranks where 'trainer.is_world_process_zero()' is true: {_HANG}"
                " (those ranks run save_model (line 11) only, while the others run no collective here)",
                range=(3, 9, 3, 32),
                expected_replacement="def f(trainer, out):\n    if trainer.is_world_process_zero():\n"
                "        pass\n    trainer.save_model(out)"),
        Invalid("import deepspeed\ndef f(module):\n    if rank == 0:\n"
                "        with deepspeed.zero.GatheredParameters(module.weight, modifier_rank=0):\n"
                "            module.weight.fill_(1.0)",
                expected_message="GatheredParameters(), which all-gathers the parameters under ZeRO-3, runs "
                f"only on ranks where 'rank == 0' is true: {_HANG}"
                " (those ranks run GatheredParameters (line 12) only, while the others run no collective here)",
                range=(4, 14, 4, 79)),
        Invalid("@accelerator.on_main_process\ndef save(path):\n    accelerator.save_state(path)",
                expected_message="accelerator.save_state(), which runs wait_for_everyone() inside (accelerate 1.15.0), is "
                f"called in 'save', which @accelerator.on_main_process runs on some ranks only: {_HANG}",
                range=(3, 5, 3, 33)),
        # The engine is the first item deepspeed.initialize() returns, whatever its name.
        Invalid("import deepspeed\ndef f(model, args):\n    model, optimizer, _, _ = deepspeed.initialize(model=model, "
                "args=args)\n    if rank == 0:\n        model.save_checkpoint('ckpt')",
                expected_message="model.save_checkpoint(), which runs dist.barrier() inside (deepspeed 0.19.8), runs "
                f"only on ranks where 'rank == 0' is true: {_HANG}"
                " (those ranks run save_checkpoint (line 13) only, while the others run no collective here)",
                range=(5, 9, 5, 38),
                expected_replacement="import deepspeed\ndef f(model, args):\n    model, optimizer, _, _ = "
                "deepspeed.initialize(model=model, args=args)\n    if rank == 0:\n        pass\n"
                "    model.save_checkpoint('ckpt')"),
        Invalid("import deepspeed\nnet = deepspeed.initialize(model=model, args=args)[0]\nif rank == 0:\n"
                "    net.load_checkpoint('ckpt')",
                expected_message="net.load_checkpoint(), which runs optimizer._restore_from_bit16_weights() inside "
                f"(deepspeed 0.19.8), runs only on ranks where 'rank == 0' is true: {_HANG}"
                " (those ranks run load_checkpoint (line 12) only, while the others run no collective here)",
                range=(4, 5, 4, 32),
                expected_replacement="import deepspeed\nnet = deepspeed.initialize(model=model, args=args)[0]\n"
                "if rank == 0:\n    pass\nnet.load_checkpoint('ckpt')"),
        Invalid("from torch.distributed import checkpoint as dcp\ndef f(state, path):\n    if rank == 0:\n"
                "        dcp.save(state, checkpoint_id=path)\n        print(path)",
                expected_message="save(), which always agrees on a plan with collectives (reduce_scatter, "
                f"all_gather), runs only on ranks where 'rank == 0' is true: {_HANG}"
                " (those ranks run save (line 12) only, while the others run no collective here)",
                range=(4, 9, 4, 44)),
        Invalid("import torch.distributed.checkpoint as dcp\ndef f(state, path):\n    if rank == 0:\n"
                "        dcp.save(state, checkpoint_id=path)\n        print(path)",
                expected_message="save(), which always agrees on a plan with collectives (reduce_scatter, "
                f"all_gather), runs only on ranks where 'rank == 0' is true: {_HANG}"
                " (those ranks run save (line 12) only, while the others run no collective here)",
                range=(4, 9, 4, 44)),
        Invalid("from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = torch.nn.Linear(2, 2)\n"
                "if local_rank == 0:\n    model = DDP(model)\n    print(model)",
                expected_message="DistributedDataParallel(), which always broadcasts the parameters from rank "
                f"0 when constructed, runs only on ranks where 'local_rank == 0' is true: {_HANG}"
                " (those ranks run DistributedDataParallel (line 12) only, while the others run no collective here)",
                range=(4, 13, 4, 23)),
        # Lightning: what the class derives from, a callback's hook parameters, what the module hands out.
        Invalid("""
            import lightning as L
            class M(L.LightningModule):
                def validation_step(self, batch, i):
                    loss = self(batch)
                    if self.global_rank == 0:
                        self.log('val', loss, sync_dist=True)
                        print(loss)
            """, expected_message="self.log(), which runs strategy.reduce() inside (lightning 2.6.6), runs only on "
                f"ranks where 'self.global_rank == 0' is true: {_HANG}"
                " (those ranks run log (line 14) only, while the others run no collective here)", range=(6, 13, 6, 50)),
        Invalid("""
            from lightning.pytorch.callbacks import Callback
            class Save(Callback):
                def on_validation_end(self, trainer, pl_module):
                    if trainer.is_global_zero:
                        trainer.save_checkpoint('best.ckpt')
                        print('saved')
            """, expected_message="trainer.save_checkpoint(), which runs strategy.barrier() inside (lightning 2.6.6), "
                f"runs only on ranks where 'trainer.is_global_zero' is true: {_HANG}"
                " (those ranks run save_checkpoint (line 13) only, while the others run no collective here)",
                range=(5, 13, 5, 49)),
        # Fabric, kept on the object (its collective-named methods, `fabric.barrier()`, are BCL005's).
        Invalid("""
            import lightning as L
            class Loop:
                def __init__(self):
                    self.fabric = L.Fabric()
                def save(self, state):
                    if self.fabric.is_global_zero:
                        self.fabric.save('ckpt', state)
                        print('saved')
            """, expected_message="self.fabric.save(), which runs strategy.save_checkpoint() inside (lightning 2.6.6), runs "
                f"only on ranks where 'self.fabric.is_global_zero' is true: {_HANG}"
                " (those ranks run save (line 15) only, while the others run no collective here)",
                range=(7, 13, 7, 44)),
        # transformers: evaluate() gathers every batch.
        Invalid("""
            from transformers import Trainer
            def run(model, args, data):
                trainer = Trainer(model=model, args=args, eval_dataset=data)
                if trainer.is_world_process_zero():
                    trainer.evaluate()
                    print('evaluated')
            """, expected_message="trainer.evaluate(), which runs evaluation_loop() inside (transformers 5.25.0), runs "
                f"only on ranks where 'trainer.is_world_process_zero()' is true: {_HANG}"
                " (those ranks run evaluate (line 13) only, while the others run no collective here)",
                range=(5, 9, 5, 27)),
        # An AveragedModel of the DDP wrapper deep-copies it: its forward is a DDP forward (pytorch#59363).
        Invalid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            from torch.optim.swa_utils import AveragedModel
            def refresh(model, loader):
                ddp = DDP(model)
                swa = AveragedModel(ddp)
                if rank == 0:
                    for x in loader:
                        swa(x)
            """, expected_message="swa.forward(), which broadcasts the module's buffers in pre_forward() (torch "
                "2.13.0), runs only on ranks where 'rank == 0' is true: the other ranks never join it and every "
                "rank hangs until the timeout",
                range=(8, 13, 8, 19)),
        # Calling a DistributedDataParallel wrapper runs its forward, which broadcasts the buffers.
        Invalid("""
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            def probe(model, x):
                ddp = DDP(model)
                if dist.get_rank() == 0:
                    print(ddp(x))
                dist.barrier()
            """, expected_message="ddp.forward(), which broadcasts the module's buffers in pre_forward() (torch "
                "2.13.0), runs only on "
                f"ranks where 'dist.get_rank() == 0' is true: {_HANG}"
                " (those ranks run DistributedDataParallel (line 12) then forward (line 14) then barrier (line 15)"
                ", while the others run DistributedDataParallel (line 12) then barrier (line 15))",
                range=(6, 15, 6, 21)),
        Invalid("""
            import torch.distributed as dist
            import torch.nn.parallel
            class Loop:
                def __init__(self, model):
                    self.model = torch.nn.parallel.DistributedDataParallel(model)
                def evaluate(self, x):
                    if dist.get_rank() == 0:
                        return self.model(x)
            """, expected_message="self.model.forward(), which broadcasts the module's buffers in pre_forward() "
                "(torch 2.13.0), runs only "
                f"on ranks where 'dist.get_rank() == 0' is true: {_HANG}"
                " (those ranks run forward (line 16) only, while the others run no collective here)",
                range=(8, 20, 8, 33)),
        # A method that runs the wrapper's forward, called on some ranks: the finding is at that call.
        Invalid("""
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            class Trainer:
                def __init__(self, net):
                    self.rank = dist.get_rank()
                    self.model = DDP(net)
                @torch.no_grad()
                def validate(self, x):
                    return self.model(x).mean().item()
                def fit(self, x):
                    if self.rank == 0:
                        print(self.validate(x))
                    dist.barrier()
            """, expected_message="validate(), which calls self.model() (case.py:18), which broadcasts the module's "
                "buffers in pre_forward() (torch 2.13.0), runs only on ranks where 'self.rank == 0' is true: "
                f"{_HANG} (those ranks run validate (line 21) then barrier (line 22), while the others run "
                "barrier (line 22) only)",
                range=(13, 19, 13, 35)),
        Invalid("""
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            def evaluate(net, x, rank):
                ddp_model = DDP(net)
                if rank == 0:
                    ddp_model(x)
                dist.barrier()
            """, expected_message="ddp_model.forward(), which broadcasts the module's buffers in pre_forward() "
                f"(torch 2.13.0), runs only on ranks where 'rank == 0' is true: {_HANG} (those ranks run "
                "DistributedDataParallel (line 12) then forward (line 14) then barrier (line 15), while the "
                "others run DistributedDataParallel (line 12) then barrier (line 15))",
                range=(6, 9, 6, 21),
                expected_replacement="import torch.distributed as dist\nfrom torch.nn.parallel import "
                "DistributedDataParallel as DDP\ndef evaluate(net, x, rank):\n    ddp_model = DDP(net)\n"
                "    if rank == 0:\n        pass\n    ddp_model(x)\n    dist.barrier()"),
        # transformers' TrainingArguments.should_save / should_log (process_index == 0), typed by receiver.
        Invalid("""
            from transformers import Trainer
            class MyTrainer(Trainer):
                def save(self, out):
                    if self.args.should_save:
                        self.save_model(out)
            """, expected_message="self.save_model(), which runs accelerator.get_state_dict() inside (transformers "
                f"5.25.0), runs only on ranks where 'self.args.should_save' is true: {_HANG}"
                " (those ranks run save_model (line 13) only, while the others run no collective here)",
                range=(5, 13, 5, 33),
                expected_replacement="from transformers import Trainer\nclass MyTrainer(Trainer):\n    def save(self, out):\n"
                "        if self.args.should_save:\n            pass\n        self.save_model(out)"),
        Invalid("""
            from transformers import TrainerCallback
            class SaveState(TrainerCallback):
                def __init__(self, accelerator):
                    self.accelerator = accelerator
                def on_save(self, args, state, control, **kwargs):
                    if args.should_save:
                        self.accelerator.save_state(args.output_dir)
                        print('saved')
            """, expected_message="self.accelerator.save_state(), which runs wait_for_everyone() inside (accelerate "
                f"1.15.0), runs only on ranks where 'args.should_save' is true: {_HANG}"
                " (those ranks run save_state (line 15) only, while the others run no collective here)",
                range=(7, 13, 7, 57)),
        Invalid("""
            from transformers import HfArgumentParser, TrainingArguments
            def main(accelerator, ModelArguments):
                parser = HfArgumentParser((ModelArguments, TrainingArguments))
                model_args, training_args = parser.parse_args_into_dataclasses()
                if training_args.should_log:
                    accelerator.save_state(training_args.output_dir)
                    print('saved')
            """, expected_message="accelerator.save_state(), which runs wait_for_everyone() inside (accelerate "
                f"1.15.0), runs only on ranks where 'training_args.should_log' is true: {_HANG}"
                " (those ranks run save_state (line 14) only, while the others run no collective here)",
                range=(6, 9, 6, 57)),
        Invalid("""
            from transformers import TrainingArguments
            def main(accelerator, training_args: TrainingArguments):
                if training_args.should_save:
                    accelerator.save_state(training_args.output_dir)
                    print('saved')
            """, expected_message="accelerator.save_state(), which runs wait_for_everyone() inside (accelerate "
                f"1.15.0), runs only on ranks where 'training_args.should_save' is true: {_HANG}"
                " (those ranks run save_state (line 12) only, while the others run no collective here)",
                range=(4, 9, 4, 57)),
        Invalid("""
            from torchmetrics import Metric
            def report(metric: Metric, rank):
                if rank == 0:
                    print(metric.compute())
            """, expected_message="metric.compute(), which runs sync() inside (torchmetrics 1.9.0), runs only on ranks "
                f"where 'rank == 0' is true: {_HANG}"
                " (those ranks run compute (line 12) only, while the others run no collective here)",
                range=(4, 15, 4, 31)),
        Invalid("""
            from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
            def f(model, rank):
                if rank == 0:
                    sd = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
                    return sd
            """, expected_message="get_model_state_dict(), which runs _gather_state_dict() inside (torch "
                f"2.13.0), runs only on ranks where 'rank == 0' is true: {_HANG}"
                " (those ranks run get_model_state_dict (line 12) only, while the others run no collective here)",
                range=(4, 14, 4, 89)),
        Invalid("""
            from torch.distributed.tensor import DTensor
            def f(w: DTensor, rank):
                if rank == 0:
                    return w.full_tensor()
            """, expected_message="w.full_tensor(), which runs funcol.all_gather_single() inside (torch 2.13.0), "
                f"runs only on ranks where 'rank == 0' is true: {_HANG}"
                " (those ranks run full_tensor (line 12) only, while the others run no collective here)",
                range=(4, 16, 4, 31)),
        Invalid("""
            from mmengine.dist import collect_results, get_rank
            def f(part, n):
                if get_rank() == 0:
                    return collect_results(part, n)
            """, expected_message="collect_results(), which runs collect_results_device() inside (mmengine "
                f"0.10.7), runs only on ranks where 'get_rank() == 0' is true: {_HANG}"
                " (those ranks run collect_results (line 12) only, while the others run no collective here)",
                range=(4, 16, 4, 40)),
        # A callback that stops its own process's Trainer on the clock, or saves from the main process
        # only: that process's Trainer leaves the loop (or saves) alone.
        Invalid("""
            import time
            from transformers import TrainerCallback
            class TimeBudget(TrainerCallback):
                def __init__(self, budget):
                    self.budget, self.start = budget, time.time()
                def on_step_end(self, args, state, control, **kwargs):
                    if time.time() - self.start > self.budget:
                        control.should_training_stop = True
                    return control
            """, expected_message="control.should_training_stop, which makes this process's Trainer leave its "
                "training loop (transformers 5.25.0, trainer.py:2008) while the others go on to the next step's "
                "gradient all-reduce, is set only on ranks where 'time.time() - self.start > self.budget' is true "
                "(it reads the clock, which differs between ranks): the other processes' Trainers go on without "
                "it, and every rank hangs until the timeout",
                range=(8, 13, 8, 41)),
        Invalid("""
            from transformers import TrainerCallback
            class SaveOnMain(TrainerCallback):
                def on_step_end(self, args, state, control, **kwargs):
                    if state.is_world_process_zero and state.global_step % 50 == 0:
                        control.should_save = True
            """, expected_message="control.should_save, which makes this process's Trainer save a checkpoint, "
                "which runs save_model() and a barrier (transformers 5.25.0, trainer.py:2322), is set only on ranks "
                "where 'state.is_world_process_zero and state.global_step % 50 == 0' is true: the other processes' "
                "Trainers go on without it, and every rank hangs until the timeout",
                range=(5, 13, 5, 32)),
        # compute() at every step, update() only where the batch has a scored row: compute() returns
        # its cache without syncing where no update ran since its last call.
        Invalid("""
            import torch
            from torchmetrics.regression import MeanSquaredError
            def evaluate(loader, model):
                mse = MeanSquaredError()
                for x, y in loader:
                    keep = ~torch.isnan(y)
                    if keep.any():
                        mse.update(model(x)[keep], y[keep])
                    print(mse.compute())
            """, expected_message="mse.compute(), which runs sync() inside (torchmetrics 1.9.0), syncs only when an "
                "update ran since its last call (otherwise it returns its cached value), and the update at line 16 "
                "runs on some ranks only (it is computed from this rank's own batch of data), so the ranks' calls "
                "stop pairing up and every rank hangs until the timeout", range=(9, 15, 9, 28)),
        # Lightning writes on rank 0 alone before the barrier: a failed write is caught there alone.
        Invalid("""
            from lightning.fabric import Fabric
            def train(fabric: Fabric, state, path):
                try:
                    fabric.save(path, state)
                except OSError as err:
                    fabric.print(f'checkpoint not written: {err}')
            """, expected_message="fabric.save(), which runs strategy.save_checkpoint() inside (lightning 2.6.6), "
                "writes on global rank 0 alone before its barrier (fabric/fabric.py:866, fabric/strategies/"
                "strategy.py:280): the handler at line 13 catches a failed write there alone, and rank 0 goes on "
                "while the other ranks wait in the barrier, and every rank hangs until the timeout",
                range=(4, 9, 4, 33)),
        # The evaluation loop gathers what prediction_step returns only where it is not None.
        Invalid("""
            from transformers import Trainer
            class ScoredOnly(Trainer):
                def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
                    if (inputs["labels"] == -100).all():
                        return None, None, None
                    return super().prediction_step(model, inputs, prediction_loss_only, ignore_keys=ignore_keys)
            """, expected_message="None from prediction_step, which makes the Trainer's evaluation loop skip its "
                "gathers of that batch (transformers 5.25.0, trainer.py:3050), is returned only on ranks where "
                "'(inputs[\"labels\"] == -100).all()' is true (it is computed from this rank's own batch of data): "
                "the other processes' Trainers go on without it, and every rank hangs until the timeout",
                range=(5, 13, 5, 36)),
        # The loss the Trainer keeps from this process's own batch, read by a callback through the
        # trainer: one process stops alone.
        Invalid("""
            from transformers import Trainer, TrainerCallback
            class GuardedTrainer(Trainer):
                last_loss = 0.0
                def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                    loss = model(**inputs).loss
                    self.last_loss = loss.item()
                    return loss
            class SpikeGuard(TrainerCallback):
                def __init__(self):
                    self.trainer = None
                def on_step_end(self, args, state, control, **kwargs):
                    if self.trainer.last_loss > 10.0:
                        control.should_training_stop = True
            def main(model, args, data):
                guard = SpikeGuard()
                guard.trainer = GuardedTrainer(model=model, args=args, train_dataset=data, callbacks=[guard])
                guard.trainer.train()
            """, expected_message="control.should_training_stop, which makes this process's Trainer leave its "
                "training loop (transformers 5.25.0, trainer.py:2008) while the others go on to the next step's "
                "gradient all-reduce, is set only on ranks where 'self.trainer.last_loss > 10.0' is true (it is "
                "computed from this rank's own batch of data): the other processes' Trainers go on without it, and "
                "every rank hangs until the timeout", range=(13, 13, 13, 41)),
        # What the collator counts of this process's own batches.
        Invalid("""
            from transformers import Trainer, TrainerCallback
            class CountingCollator:
                def __init__(self):
                    self.tokens = 0
                def __call__(self, features):
                    self.tokens += sum(len(f["input_ids"]) for f in features)
                    return features
            class EvalEveryTokens(TrainerCallback):
                def __init__(self, collator):
                    self.collator = collator
                def on_step_end(self, args, state, control, **kwargs):
                    if self.collator.tokens >= 1000:
                        control.should_evaluate = True
            def main(model, args, data):
                collator = CountingCollator()
                Trainer(model=model, args=args, train_dataset=data, data_collator=collator,
                        callbacks=[EvalEveryTokens(collator)]).train()
            """, expected_message="control.should_evaluate, which makes this process's Trainer evaluate, which "
                "gathers every batch (transformers 5.25.0, trainer.py:2315), is set only on ranks where "
                "'self.collator.tokens >= 1000' is true (it is computed from this rank's own batch of data): the "
                "other processes' Trainers go on without it, and every rank hangs until the timeout",
                range=(13, 13, 13, 36)),
        # A checkpoint decision on a metric logged without sync_dist (pytorch-lightning#6345): each
        # process compares its own mean, and only the one whose loss fell saves.
        Invalid("""
            from lightning.pytorch import Callback, LightningModule
            class Net(LightningModule):
                def validation_step(self, batch, batch_idx):
                    self.log("val_loss", self.loss_of(batch), on_epoch=True)
            class SaveBest(Callback):
                best = float("inf")
                def on_validation_epoch_end(self, trainer, pl_module):
                    current = float(trainer.callback_metrics["val_loss"])
                    if current < self.best:
                        self.best = current
                        trainer.save_checkpoint("best.ckpt")
            """, expected_message="trainer.save_checkpoint(), which runs strategy.barrier() inside (lightning 2.6.6), "
                "runs only on ranks where 'current < self.best' is true ('val_loss' is logged without sync_dist=True, "
                "so the trainer's metrics hold each rank's own value): the other ranks never join it and every rank "
                "hangs until the timeout (those ranks run save_checkpoint (line 19) only, while the others run no "
                "collective here)", range=(11, 13, 11, 49)),
        # -1 from on_train_batch_start where this process's batch holds no target: its Trainer
        # leaves the epoch alone (pytorch-lightning#21296).
        Invalid("""
            from lightning.pytorch import LightningModule
            class Net(LightningModule):
                def on_train_batch_start(self, batch, batch_idx):
                    if (batch["labels"] == -100).all():
                        return -1
            """, expected_message="on_train_batch_start() returns -1, which makes this process's Trainer leave the "
                "epoch (lightning 2.6.6, loops/training_epoch_loop.py:337), only where '(batch[\"labels\"] == "
                "-100).all()' holds (it is computed from this rank's own batch of data): the other processes go on "
                "to the next step's gradient all-reduce without it, and every rank hangs until the timeout",
                range=(5, 13, 5, 22)),
        # A head run only for the batches that hold a box, under DDP that expects every gradient
        # (mmdetection3d#488).
        Invalid("""
            import torch
            from torch import nn
            from torch.nn.parallel import DistributedDataParallel as DDP
            class TwoStage(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.backbone, self.refine = nn.Linear(4, 8), nn.Linear(8, 4)
                def forward(self, x, has_box):
                    h = self.backbone(x)
                    loss = h.pow(2).mean()
                    if has_box.any():
                        loss = loss + self.refine(h[has_box]).mean()
                    return loss
            model = DDP(TwoStage())
            """, expected_message="self.refine() runs in TwoStage.forward() only where 'has_box.any()' holds, a test "
                "on the step's data, and TwoStage is wrapped in DistributedDataParallel without "
                "find_unused_parameters=True (line 22): in a step that skips it, DDP's reducer waits for gradients "
                "of its parameters that never come, so that process's next forward fails with 'Expected to have "
                "finished reduction in the prior iteration' while the others wait in the gradient all-reduce",
                range=(12, 27, 12, 50)),
        # The trainer's metrics read on the main process only, where the module logs one with
        # sync_dist=True for the epoch: the read computes it (sleap-nn#476).
        Invalid("""
            from lightning.pytorch import Callback, LightningModule
            class Net(LightningModule):
                def validation_step(self, batch, batch_idx):
                    self.log("val_loss", self.loss_of(batch), sync_dist=True)
            class CsvLogger(Callback):
                def on_validation_epoch_end(self, trainer, pl_module):
                    if trainer.is_global_zero:
                        print(dict(trainer.callback_metrics))
            """, expected_message="trainer.callback_metrics, which computes the epoch's metrics logged with "
                "sync_dist=True at its first read, an all_reduce each (lightning 2.6.6, "
                "trainer/connectors/logger_connector/result.py:439), runs only on ranks where "
                "'trainer.is_global_zero' is true: the other ranks never join it and every rank hangs until the "
                "timeout (those ranks run callback_metrics (line 16) only, while the others run no collective here)",
                range=(8, 24, 8, 48)),
        # Accelerate's debug mode turned on for the watched rank only: its operations check every
        # process's shapes with a gather_object first, there alone.
        Invalid("""
            import os
            from accelerate import Accelerator
            if os.environ.get("RANK", "0") in os.environ.get("DEBUG_RANKS", "0").split(","):
                os.environ["ACCELERATE_DEBUG_MODE"] = "1"
            def main(loader, model):
                accelerator = Accelerator()
                for batch in loader:
                    loss = model(batch)
                    print(accelerator.reduce(loss.detach()))
                    print(accelerator.gather(loss.detach()))
            """, expected_message="accelerator.reduce() runs a gather_object() of every process's shapes first where "
                "ACCELERATE_DEBUG_MODE is set (accelerate 1.15.0, utils/operations.py:390), and line 12 sets it "
                "under a test on the rank: the ranks' collectives stop pairing up, and every rank hangs until the "
                "timeout", range=(9, 15, 9, 48)),
        # Manual optimization that skips the step on unlabelled batches, with a checkpoint every two
        # global steps: each rank's global_step counts its own steps.
        Invalid("""
            from lightning.pytorch import LightningModule, Trainer
            from lightning.pytorch.callbacks import ModelCheckpoint
            class SemiSupervised(LightningModule):
                def __init__(self):
                    super().__init__()
                    self.automatic_optimization = False
                def training_step(self, batch, batch_idx):
                    x, labelled = batch
                    opt = self.optimizers()
                    self.manual_backward(self.loss(x, labelled))
                    if labelled.any():
                        opt.step()
            trainer = Trainer(callbacks=[ModelCheckpoint(every_n_train_steps=2)])
            """, expected_message="opt.step() runs only where 'labelled.any()' holds (it is computed from this rank's "
                "own batch of data): under manual optimization Lightning counts global_step in the optimizer's steps "
                "(lightning 2.6.6, loops/optimization/manual.py:137), so it drifts apart between ranks, and what the "
                "Trainer runs at a global step (every_n_train_steps) runs its collectives at a different step on "
                "each rank, and every rank hangs until the timeout", range=(12, 13, 12, 23)),
        # The everyday spelling: the parameter bound again to its DDP wrapper, and a step skipped
        # on a non-finite loss of the rank's own batch.
        Invalid("""
            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP
            def train(model, loader, opt):
                model = DDP(model)
                for batch in loader:
                    loss = model(batch).mean()
                    if not torch.isfinite(loss):
                        continue
                    loss.backward()
                    opt.step()
            """, expected_message="loss.backward(), which runs the gradient all_reduce() of DDP's reducer inside "
                "(torch 2.13.0), is skipped on ranks where 'torch.isfinite(loss)' is false (it is computed from this "
                "rank's own batch of data): the 'continue' at line 16 is taken only there, while the other ranks go "
                "on calling it, so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(9, 9, 9, 24)),
        # A callback that stops its own process's Lightning Trainer on its own batch's loss
        # (pytorch-lightning#6232): the loops read should_stop unsynced.
        Invalid("""
            import torch
            from lightning.pytorch import Callback
            class DivergenceGuard(Callback):
                def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
                    loss = outputs["loss"].detach()
                    if not torch.isfinite(loss) or loss > 100.0:
                        trainer.should_stop = True
            """, expected_message="trainer.should_stop, which makes this process's Trainer leave its training loop "
                "(lightning 2.6.6, loops/training_epoch_loop.py:135) while the others go on to the next step's "
                "gradient all-reduce, is set only on ranks where 'not torch.isfinite(loss) or loss > 100.0' is true "
                "(it is computed from this rank's own batch of data): the other processes' Trainers go on without "
                "it, and every rank hangs until the timeout", range=(7, 13, 7, 32)),
        # The module FSDP's own context manager names is an FSDP module: its state_dict() gathers.
        Invalid("""
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType
            def save(model, path):
                if dist.get_rank() == 0:
                    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):
                        state = model.state_dict()
                    torch.save(state, path)
            """, expected_message="model.state_dict(), which runs _unshard_fsdp_state_params() inside (torch "
                "2.13.0), runs only on ranks where 'dist.get_rank() == 0' is true: the other ranks never join it "
                "and every rank hangs until the timeout (those ranks run state_dict (line 13) only, while the "
                "others run no collective here)",
                range=(5, 21, 5, 39)),
        # Each process times its own reads in its dataset; the callback saves once they look slow.
        Invalid("""
            import time
            import lightning as L
            class Recordings(torch.utils.data.Dataset):
                def __init__(self, rows):
                    self.rows, self.io_seconds = rows, 0.0
                def __getitem__(self, i):
                    start = time.monotonic()
                    row = load(self.rows[i])
                    self.io_seconds += time.monotonic() - start
                    return row
            class StallCheckpoint(L.Callback):
                def __init__(self, path, budget):
                    self.path, self.budget, self.saved = path, budget, False
                def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
                    stalled = trainer.train_dataloader.dataset.io_seconds > self.budget
                    if stalled and not self.saved:
                        trainer.save_checkpoint(self.path)
                        self.saved = True
            """, expected_message="trainer.save_checkpoint(), which runs strategy.barrier() inside (lightning "
                "2.6.6), runs only on ranks where 'stalled and not self.saved' is true (it reads the clock, which "
                "differs between ranks): the other ranks never join it and every rank hangs until the timeout "
                "(those ranks run save_checkpoint (line 25) only, while the others run no collective here)",
                range=(17, 13, 17, 47)),
        # A batch counter kept beside the synced sum as a plain attribute (super-gradients#446).
        Invalid("""
            from torchmetrics import Metric
            class MeanBatchRecall(Metric):
                def __init__(self):
                    super().__init__()
                    self.add_state("recall_sum", default=torch.tensor(0.0), dist_reduce_fx="sum")
                    self.num_batches = 0
                def update(self, preds, target):
                    self.recall_sum += ((preds == 1) & (target == 1)).sum() / (target == 1).sum()
                    self.num_batches += 1
                def compute(self):
                    return self.recall_sum / self.num_batches
            def main(pairs):
                metric = MeanBatchRecall()
                for preds, target in pairs:
                    metric.update(preds, target)
                score = metric.compute()
                dist.barrier()
            """, expected_message="self.num_batches is a plain attribute of a torchmetrics Metric: update() "
                "changes it on each process and compute() reads it as it is, while the states registered with "
                "add_state() are synced first (torchmetrics 1.9.0 syncs only those), so every process computes "
                "with its own 'num_batches'",
                range=(9, 9, 9, 30)),
        Invalid(_TAIL_STEP, expected_message="model.forward(), which broadcasts the module's buffers in pre_forward() "
                "(torch 2.13.0), is skipped on ranks where 'x.shape[0] < 2' is true (line 19 passes 'rows[idx]', "
                "and each rank takes its own share of the items, and the shares differ in length unless they "
                "divide evenly): the 'return' at line 12 is taken only there, while the other ranks go on calling "
                "it, so the ranks' calls stop pairing up and every rank hangs until the timeout (those ranks run "
                "no collective here, while the others run forward (line 13) only)",
                range=(5, 12, 5, 20)),
        Invalid(_FAILED_UPDATE, expected_message="metric.compute(), which runs sync() inside (torchmetrics 1.9.0), is "
                "skipped on ranks where the 'try' at line 11 raises (work in the 'try' block can fail on some ranks "
                "only): the 'return' at line 15 is taken only there, while the other ranks go on calling it, so "
                "the ranks' calls stop pairing up and every rank hangs until the timeout (those ranks run no "
                "collective here, while the others run compute (line 16) only)",
                range=(8, 12, 8, 28)),
        # The loss comes from a helper handed the DDP model, which it calls: its backward is DDP's.
        Invalid("import torch.nn.functional as F\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
                "def step_loss(model, x, y):\n    return F.mse_loss(model(x), y)\n"
                "def train(net, loader, opt):\n    model = DDP(net)\n    for x, y in loader:\n"
                "        loss = step_loss(model, x, y)\n        if not torch.isfinite(loss):\n            continue\n"
                "        loss.backward()\n        opt.step()",
                expected_message="loss.backward(), which runs the gradient all_reduce() of DDP's reducer "
                "inside (torch 2.13.0), is skipped on ranks where 'torch.isfinite(loss)' is false (it is computed "
                "from this rank's own batch of data): the 'continue' at line 18 is taken only there, while the "
                "other ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout",
                range=(11, 9, 11, 24)),
        # FSDP's clip_grad_norm_ all-reduces the norm: switched on by each rank's own losses.
        Invalid("from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
                "def train(net, loader, opt):\n    model = FSDP(net)\n    rises, previous = 0, 1e9\n"
                "    for x, y in loader:\n        loss = (model(x) - y).pow(2).mean()\n        loss.backward()\n"
                "        rises = rises + 1 if loss.item() > previous else 0\n        previous = loss.item()\n"
                "        if rises >= 2:\n            model.clip_grad_norm_(1.0)\n        opt.step()",
                expected_message="model.clip_grad_norm_(), which runs dist.all_reduce() inside (torch 2.13.0), "
                "runs only on ranks where 'rises >= 2' is true (it is computed from this rank's own batch of "
                "data): the other ranks never join it and every rank hangs until the timeout",
                range=(11, 13, 11, 39)),
        # Saved into a temporary directory of each process's own: Lightning writes on rank 0 alone,
        # so the other ranks find no file there and save again.
        Invalid("""
            import tempfile
            import lightning as L
            class StageAndPublish(L.Callback):
                def on_train_end(self, trainer, pl_module):
                    path = os.path.join(tempfile.mkdtemp(), "final.ckpt")
                    trainer.save_checkpoint(path)
                    if not os.path.isfile(path):
                        trainer.save_checkpoint(path)
            """, expected_message="trainer.save_checkpoint(), which runs strategy.barrier() inside (lightning "
                "2.6.6), runs only on ranks where 'os.path.isfile(path)' is false (it names a temporary file or "
                "directory of this process's own (tempfile), which no other rank sees): the other ranks never "
                "join it and every rank hangs until the timeout (those ranks run save_checkpoint (line 14) then "
                "save_checkpoint (line 16), while the others run save_checkpoint (line 14) only)",
                range=(8, 13, 8, 42)),
        # A full state dict's gather under a test on the rank; the options are handed as a name.
        Invalid("""
            from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
            def export(model):
                if dist.get_rank() == 0:
                    options = StateDictOptions(full_state_dict=True)
                    return get_model_state_dict(model, options=options)
            """, expected_message="get_model_state_dict(), which runs _gather_state_dict() inside (torch "
                "2.13.0), runs only on ranks where 'dist.get_rank() == 0' is true: the other ranks never join it "
                "and every rank hangs until the timeout (those ranks run get_model_state_dict (line 13) only, "
                "while the others run no collective here)",
                range=(5, 16, 5, 60)),
        # A DDP backward of a loss from the rank's own batch, in a `try` whose handler goes on:
        # a NaN under anomaly detection or an out-of-memory error fails it there alone (icefall#8).
        Invalid("from torch.nn.parallel import DistributedDataParallel as DDP\n"
                "def f(model, loader, opt):\n    model = DDP(model)\n    for x, y in loader:\n"
                "        loss = ((model(x) - y) ** 2).mean()\n        try:\n"
                "            with torch.autograd.detect_anomaly():\n                loss.backward()\n"
                "        except RuntimeError:\n            opt.zero_grad()\n            continue\n        opt.step()",
                expected_message="loss.backward(), which runs the gradient all_reduce() of DDP's reducer "
                "inside (torch 2.13.0), fails on ranks whose own batch makes the backward fail (a NaN under "
                "anomaly detection, out of memory) before it synchronises the gradients: 'loss' is computed from "
                "each rank's own data, and the handler of the 'try' at line 14 goes on without it, so the ranks' "
                "calls stop pairing up and every rank hangs until the timeout",
                range=(8, 17, 8, 32)),
        # ZeRO's step broadcasts the parameters each rank owns: `Join` shadows it only for what it joins.
        Invalid("from torch.distributed.algorithms.join import Join\n"
                "from torch.distributed.optim import ZeroRedundancyOptimizer\n"
                "from torch.nn.parallel import DistributedDataParallel as DDP\ndef f(model):\n"
                "    model = DDP(model)\n"
              "    opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.SGD)\n"
                "    with Join([model]):\n        for x in load(rank):\n            model(x).sum().backward()\n"
                "            opt.step()",
                expected_message="opt.step(), which runs local_step() inside (torch 2.13.0), runs a different "
                "number of times on different ranks: the loop at line 16 iterates over 'load(rank)', whose length "
                "can differ between ranks (it is read from a file named after the rank: the rank's own data), so "
                "the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(10, 13, 10, 23)),
        # A metric class of the module held in an attribute: its compute syncs; its states, read
        # from outside it, are each rank's own until then (DeepForest#1407).
        Invalid(_HIT_RATE
                + "        if self.trainer.is_global_zero:\n            self.log('hit', self.hit_rate.compute())",
                expected_message="self.hit_rate.compute(), which runs sync() inside (torchmetrics 1.9.0), runs "
                "only on ranks where 'self.trainer.is_global_zero' is true: the other ranks never join it and "
                "every rank hangs until the timeout (those ranks run compute (line 25) only, while the others run "
                "no collective here)",
                range=(17, 29, 17, 52)),
        Invalid(_HIT_RATE
                + "        if len(self.hit_rate.hits) > 0:\n            self.log('hit', self.hit_rate.compute())",
                expected_message="self.hit_rate.compute(), which runs sync() inside (torchmetrics 1.9.0), runs "
                "only on ranks where 'len(self.hit_rate.hits) > 0' is true (a torchmetrics metric's state holds "
                "this rank's own updates until compute() syncs it): the other ranks never join it and every rank "
                "hangs until the timeout (those ranks run compute (line 25) only, while the others run no "
                "collective here)",
                range=(17, 29, 17, 52)),
        # The same helper over an odd table: the shares differ by one item.
        Invalid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            def make_rows():
                lengths = [12, 10, 8, 20, 14]
                return [torch.ones(n) for n in lengths]
            def train(model, world):
                ddp = DDP(model)
                for x in make_rows()[rank::world]:
                    ddp(x).sum().backward()
            """, expected_message="ddp.forward(), which broadcasts the module's buffers in pre_forward() (torch "
                "2.13.0), runs a different number of times on different ranks: the loop at line 15 iterates over "
                "'make_rows()[rank::world]', whose length depends on the rank, so the ranks' calls stop pairing "
                "up and every rank hangs until the timeout",
                range=(8, 9, 8, 15)),
        # A PPO loss several assignments from the DDP forward pass (ratio of the new and old log
        # probabilities, clipped): its backward all-reduces the gradients, here on rank 0 alone.
        Invalid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            def update(net, obs, old_logp, advantages):
                policy = DDP(net)
                logp = torch.log_softmax(policy(obs), -1)[:, 0]
                ratio = (logp - old_logp).exp()
                clipped = torch.clamp(ratio, 0.8, 1.2)
                loss = -torch.min(ratio * advantages, clipped * advantages).mean()
                if rank == 0:
                    loss.backward()
            """, expected_message="loss.backward(), which runs the gradient all_reduce() of DDP's reducer "
                "inside (torch 2.13.0), runs only on ranks where 'rank == 0' is true: the other ranks never join "
                "it and every rank hangs until the timeout (those ranks run DistributedDataParallel (line 11) "
                "then forward (line 12) then backward (line 17), while the others run DistributedDataParallel "
                "(line 11) then forward (line 12))",
                range=(9, 9, 9, 24),
                expected_replacement=textwrap.dedent("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            def update(net, obs, old_logp, advantages):
                policy = DDP(net)
                logp = torch.log_softmax(policy(obs), -1)[:, 0]
                ratio = (logp - old_logp).exp()
                clipped = torch.clamp(ratio, 0.8, 1.2)
                loss = -torch.min(ratio * advantages, clipped * advantages).mean()
                if rank == 0:
                    pass
                loss.backward()
            """).strip("\n")),
        # Rollouts drawn from a generator each rank seeds with its rank (a helper handed
        # `1000 + rank`): the early stop on the KL of its own rollout is each rank's own (trl#254).
        Invalid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            def rollout(env_seed):
                g = torch.Generator().manual_seed(env_seed)
                return torch.randn(64, 4, generator=g)
            def update(epochs):
                policy = DDP(torch.nn.Linear(4, 2))
                obs = rollout(1000 + rank)
                for epoch in range(epochs):
                    kl = policy(obs).pow(2).mean().item()
                    if kl > 0.02:
                        break
                    loss = policy(obs).sum()
                    loss.backward()
            """, expected_message="loss.backward(), which runs the gradient all_reduce() of DDP's reducer "
                "inside (torch 2.13.0), is skipped in the following iterations on ranks where 'kl > 0.02' is true "
                "(it is drawn from a random generator the module seeds with the rank): the 'break' at line 19 is "
                "taken only there, while the other ranks go on calling it, so the ranks' calls stop pairing up "
                "and every rank hangs until the timeout",
                range=(13, 9, 13, 24)),
        # An episode of the rank's own environment (seeded with the rank) lasts its own number of
        # steps, each a DDP backward of a loss made on the spot.
        Invalid("""
            import random
            from torch.nn.parallel import DistributedDataParallel as DDP
            class Env:
                def __init__(self, seed):
                    self.rng = random.Random(seed)
                def step(self):
                    return self.rng.random() < 0.2
            def train():
                policy = DDP(torch.nn.Linear(4, 1))
                env = Env(seed=1000 + rank)
                done = False
                while not done:
                    policy(torch.ones(4)).sum().backward()
                    done = env.step()
            """,
                expected_message="policy(torch.ones(4)).sum().backward(), which runs the gradient all_reduce() of DDP's "
                "reducer inside (torch 2.13.0), runs a different number of times on different ranks: the "
                "loop at line 20 runs while 'not done' holds, which can differ between ranks (it is drawn"
                " from a random generator the module seeds with the rank), so the ranks' calls stop "
                "pairing up and every rank hangs until the timeout",
                range=(13, 9, 13, 47)),
        # Gradients accumulated under no_sync() are each rank's own: a non-finite check there ends
        # the rank's loop before the backward that syncs.
        Invalid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            def grads_finite(model):
                return all(bool(torch.isfinite(p.grad).all()) for p in model.parameters())
            def train(batches):
                model = DDP(torch.nn.Linear(4, 1))
                for x, y in batches:
                    with model.no_sync():
                        loss = (model(x) - y).pow(2).mean()
                        loss.backward()
                    if not grads_finite(model):
                        break
                    loss = (model(y) - x).pow(2).mean()
                    loss.backward()
            """,
                expected_message="loss.backward(), which runs the gradient all_reduce() of DDP's reducer inside (torch "
                "2.13.0), is skipped in the following iterations on ranks where 'grads_finite(model)' is "
                "false ('grads_finite()' returns something else on some ranks, as it reads this rank's "
                "own gradients, which nothing has averaged between the ranks yet): the 'break' at line 19"
                " is taken only there, while the other ranks go on calling it, so the ranks' calls stop "
                "pairing up and every rank hangs until the timeout",
                range=(13, 9, 13, 24)),
        # An expert no token of this step was routed to is skipped, under Lightning's DDP strategy
        # (Megatron-LM#4851's shape, blind44): its parameters get no gradient.
        Invalid("""
            import lightning as L
            class MoE(L.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.experts = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(2))
                def moe(self, h):
                    route = h.sum(-1).long() % 2
                    out = torch.zeros_like(h)
                    for e, expert in enumerate(self.experts):
                        sel = route == e
                        if not sel.any():
                            continue
                        out = out.index_put((sel,), expert(h[sel]))
                    return out
                def training_step(self, batch, batch_idx):
                    return self.moe(batch).sum()
            def main():
                trainer = L.Trainer(strategy="ddp", devices=2)
                trainer.fit(MoE())
            """,
                expected_message="expert() is skipped in MoE.moe() where 'not sel.any()' holds, a test on the step's data,"
                " and the Trainer at line 26 wraps MoE in DistributedDataParallel (its DDP strategy) "
                "without find_unused_parameters=True: in a step that skips it, DDP's reducer waits for "
                "gradients of its parameters that never come, so that process's next forward fails with "
                "'Expected to have finished reduction in the prior iteration' while the others wait in "
                "the gradient all-reduce",
                range=(11, 16, 11, 29)),
        # The same in a forward wrapped in DDP by hand.
        Invalid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            class MoE(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.experts = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(2))
                def forward(self, h):
                    route = h.sum(-1).long() % 2
                    out = torch.zeros_like(h)
                    for e, expert in enumerate(self.experts):
                        if not (route == e).any():
                            continue
                        out = out + expert(h).sum()
                    return out
            model = DDP(MoE())
            """,
                expected_message="expert() is skipped in MoE.forward() where 'not (route == e).any()' holds, a test on the"
                " step's data, and MoE is wrapped in DistributedDataParallel without "
                "find_unused_parameters=True (line 22): in a step that skips it, DDP's reducer waits for "
                "gradients of its parameters that never come, so that process's next forward fails with "
                "'Expected to have finished reduction in the prior iteration' while the others wait in "
                "the gradient all-reduce",
                range=(10, 16, 10, 38)),
        # Local SGD over each rank's own strided share: the parameter averaging that step()
        # runs every few calls pairs up with nothing on the rank with fewer batches (blind24).
        Invalid("""
            from accelerate.local_sgd import LocalSGD
            def train(model, rows):
                with LocalSGD(accelerator=accelerator, model=model, local_sgd_steps=4) as local_sgd:
                    for x in rows[rank::2]:
                        model(x).sum().backward()
                        local_sgd.step()
            """,
                expected_message="local_sgd.step(), which runs accelerator.reduce() of the parameters inside (accelerate "
                "1.15.0), runs a different number of times on different ranks: the loop at line 12 "
                "iterates over 'rows[rank::2]', whose length depends on the rank, so the ranks' calls "
                "stop pairing up and every rank hangs until the timeout",
                range=(6, 13, 6, 29)),
        # The distillation term added only where this rank's teacher is confident
        # (Distillation-DNABERT-Promoter#1's shape, blind47): the projector goes without a gradient.
        Invalid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            class Student(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = torch.nn.Linear(6, 4)
                    self.proj = torch.nn.Linear(6, 5)
                def forward(self, h):
                    return self.head(h), self.proj(h)
            student = DDP(Student())
            teacher = torch.nn.Linear(6, 5)
            g = torch.Generator().manual_seed(rank)
            for _ in range(8):
                x, y = torch.randn(4, 6, generator=g), torch.randint(0, 4, (4,), generator=g)
                teacher_feat = teacher(x)
                conf = teacher_feat.softmax(-1).max().item()
                logits, feat = student(x)
                loss = torch.nn.functional.cross_entropy(logits, y)
                if conf > 0.5:
                    loss = loss + (feat - teacher_feat).pow(2).mean()
                loss.backward()
            """,
                expected_message="loss.backward() runs DDP's gradient all-reduce, and 'feat' (Student.forward's proj() "
                "output) enters the loss only where 'conf > 0.5' holds, a test on the step's data, while "
                "Student is wrapped in DistributedDataParallel without find_unused_parameters=True (line "
                "17): in a step where it does not, proj's parameters get no gradient, so that process's "
                "next forward fails with 'Expected to have finished reduction in the prior iteration' "
                "while the others wait in the gradient all-reduce",
                range=(20, 5, 20, 20)),
        # A loss helper that returns a new zero where the rank's batch has no positive pair: that rank's
        # backward reaches no parameter of the prepared model (pytorch#23425).
        Invalid("""
            import torch.nn.functional as F
            def supcon(emb, labels):
                same = labels[:, None] == labels[None, :]
                if not same.any():
                    return torch.zeros((), requires_grad=True)
                return -(emb @ emb.T)[same].mean()
            def train(model, opt, loader):
                model, opt, loader = accelerator.prepare(model, opt, loader)
                for x, labels in loader:
                    loss = supcon(F.normalize(model(x), dim=1), labels)
                    accelerator.backward(loss)
                    opt.step()
            """, expected_message="supcon() returns 'torch.zeros((), requires_grad=True)', a new tensor that no parameter "
                "reaches, only where 'not same.any()' holds (it is computed from this rank's own batch of"
                " data), and line 19 backs it through accelerator.backward(): the wrapped model's "
                "gradient all-reduce, run as the parameters get gradients, never starts on those ranks, "
                "so the others wait in it and every rank hangs until the timeout",
                range=(5, 9, 5, 51)),
        # The same through DistributedDataParallel and `loss.backward()`.
        Invalid("""
            import torch.nn.functional as F
            from torch.nn.parallel import DistributedDataParallel as DDP
            def masked(out, target):
                keep = target >= 0
                if not keep.any():
                    return torch.tensor(0.0, device=out.device)
                return F.cross_entropy(out[keep], target[keep])
            def train(model, loader, opt):
                ddp = DDP(model)
                for x, target in loader:
                    loss = masked(ddp(x), target)
                    loss.backward()
                    opt.step()
            """, expected_message="masked() returns 'torch.tensor(0.0, device=out.device)', a new tensor that no parameter "
                "reaches, only where 'not keep.any()' holds (it is computed from this rank's own batch of"
                " data), and line 20 backs it through loss.backward(): the backward raises 'element 0 of "
                "tensors does not require grad and does not have a grad_fn' on those ranks while the "
                "others wait in the wrapped model's gradient all-reduce",
                range=(6, 9, 6, 52)),
        # A LightningModule's training_step that returns what its own loss method does.
        Invalid("""
            import lightning.pytorch as pl
            import torch.nn.functional as F
            class Detector(pl.LightningModule):
                def _loss(self, out, y):
                    keep = y != -1
                    if not keep.any():
                        return torch.tensor(0.0, requires_grad=True)
                    return F.cross_entropy(out[keep], y[keep])
                def training_step(self, batch, index):
                    x, y = batch
                    return self._loss(self.net(x), y)
            """, expected_message="_loss() returns 'torch.tensor(0.0, requires_grad=True)', a new tensor that no parameter "
                "reaches, only where 'not keep.any()' holds (it is computed from this rank's own batch of"
                " data), and training_step() returns it to the Trainer's backward through "
                "DistributedDataParallel: the wrapped model's gradient all-reduce, run as the parameters "
                "get gradients, never starts on those ranks, so the others wait in it and every rank "
                "hangs until the timeout",
                range=(7, 13, 7, 57)),
        # A training_step that returns None from the handler of a 'try' whose work on the rank's own
        # batch can fail there alone (sampling more positives than a class holds).
        Invalid("""
            import random
            import lightning.pytorch as pl
            class Contrastive(pl.LightningModule):
                def training_step(self, batch, index):
                    x, y = batch
                    emb = self.encoder(x)
                    try:
                        pos = torch.stack([torch.stack(random.sample(self.memory[int(c)], 2)) for c in y])
                    except ValueError:
                        return None
                    return -(emb[:, None, :] * pos).sum(-1).mean()
            """, expected_message="training_step() returns None, which skips the backward and the optimizer step, only "
                "where the 'try' at line 15 fails with ValueError (work in the 'try' block can fail on "
                "some ranks only): the Trainer's backward through DistributedDataParallel all-reduces "
                "each gradient as the parameters get one, which never happens on those ranks, so the "
                "others wait in the gradient all-reduce and every rank hangs until the timeout",
                range=(10, 13, 10, 24)),
        # A pruning callback that raises on the rank's own validation loss, caught around fit()
        # (optuna-examples#101).
        Invalid("""
            import lightning.pytorch as pl
            class Pruned(Exception):
                pass
            class Pruning(pl.Callback):
                def on_validation_end(self, trainer, pl_module):
                    if trainer.callback_metrics["val_loss"] > 1.0:
                        raise Pruned()
            class Model(pl.LightningModule):
                def validation_step(self, batch, index):
                    self.log("val_loss", self.net(batch).mean())
            def run(model, loader):
                trainer = pl.Trainer(strategy="ddp", callbacks=[Pruning()])
                try:
                    trainer.fit(model, loader, loader)
                except Pruned:
                    return None
                return trainer
            """, expected_message='on_validation_end() raises Pruned only where \'trainer.callback_metrics["val_loss"] > '
                "1.0' holds ('val_loss' is logged without sync_dist=True, so the trainer's metrics hold "
                "each rank's own value), and it is caught around fit(): fit() ends on those ranks, which "
                "go on as if the run were over, while the Trainer on the others goes on to the next "
                "collective (DDP's gradient all-reduce, a checkpoint's barrier) and every rank hangs "
                "until the timeout",
                range=(7, 13, 7, 27)),
        # ... but at every micro-batch but the last
        Invalid("import contextlib\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
                "def f(shard, steps):\n    model = DDP(torch.nn.Linear(1, 1))\n    for step in range(steps):\n"
                "        micro = [m for m in shard[rank::2] if m]\n        for i, batch in enumerate(micro):\n"
                "            ctx = model.no_sync() if i == len(micro) - 1 else contextlib.nullcontext()\n"
                "            with ctx:\n                model(batch).sum().backward()",
                expected_message="model(batch).sum().backward(), which runs the gradient all_reduce() of DDP's reducer "
                "inside (torch 2.13.0), runs a different number of times on different ranks: the loop at "
                "line 15 iterates over 'enumerate(micro)', whose length can differ between ranks (it is "
                "computed from the rank), so the ranks' calls stop pairing up and every rank hangs until "
                "the timeout",
                range=(10, 17, 10, 46)),
    )

    @classmethod
    def documentation(cls) -> str:
        """The docstring, with the framework map's source and table filled in."""
        framework_map = frameworks.load()
        return super().documentation().replace("{map_source}", framework_map.source()).replace(
            "{map_table}", "\n".join(_row(entry) for entry in framework_map.entries.values()
                                     if apis.framework_api(entry).payload == apis.HIDDEN))

    @staticmethod
    def sites(analysis: ModuleAnalysis) -> Iterator[CallSite]:
        return (site for site in analysis.calls if site.api.payload == apis.HIDDEN)

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        reported = set()
        for report in self.check_sites(analysis):
            reported.add(report.node)
            yield report
        yield from _prepared_loops_on_some_ranks(analysis)
        yield from (report for report in _failed_writes_swallowed(analysis) if report.node not in reported)
        yield from (report for report in _rejected_batches_swallowed(analysis) if report.node not in reported)
        yield from (report for report in _resharded_datasets(analysis) if report.node not in reported)
        yield from _losses_apart_from_the_model(analysis)
        yield from _loss_helpers_apart_from_the_model(analysis)
        yield from _batches_dropped_by_the_collator(analysis)
        yield from _epoch_left_on_some_ranks(analysis)
        yield from _hooks_raising_on_some_ranks(analysis)
        yield from _submodules_skipped_under_ddp(analysis)
        yield from _outputs_used_sometimes_under_ddp(analysis)
        yield from _wrapper_bypassed(analysis)
        yield from _plateau_on_own_values(analysis)
        yield from _debug_mode_on_some_ranks(analysis)
        yield from _manual_steps_on_some_ranks(analysis)
        yield from _loads_what_rank_zero_saved(analysis)
        yield from _best_metric_set_on_some_ranks(analysis)
        yield from _metric_attributes_left_unsynced(analysis)


_TORCHMETRICS = frameworks.load().versions["torchmetrics"]


def _metric_attributes_left_unsynced(analysis: ModuleAnalysis) -> Iterator[Report]:
    """A torchmetrics `Metric` whose `update()` changes a plain attribute (`self.num_batches += 1`,
    set in `__init__` without `add_state`) that `compute()` reads: the metric syncs only the states
    it registered, so each process computes with its own count beside the synced sums
    (Deci-AI/super-gradients#446)."""
    for klass in (statement for statement in analysis.module.body if isinstance(statement, cst.ClassDef)):
        methods = {member.name.value: member for member in klass.body.body if isinstance(member, cst.FunctionDef)}
        init, update, compute = methods.get("__init__"), methods.get("update"), methods.get("compute")
        if init is None or update is None or compute is None \
                or analysis.receiver_class(cst.Name("self"), update) != "torchmetrics.metric.Metric":
            continue
        registered = {argument.value.evaluated_value for call in every_node(init, cst.Call)
                      if last_name(call.func) == "add_state" and call.args
                      for argument in call.args[:1] if isinstance(argument.value, cst.SimpleString)}
        plain = _self_attributes_set(init) - registered
        read = {node.attr.value for node in every_node(compute, cst.Attribute) if is_self_attribute(node)}
        for statement in every_node(update, cst.AugAssign) + every_node(update, cst.Assign):
            targets = [statement.target] if isinstance(statement, cst.AugAssign) else [t.target for t in statement.targets]
            changed = next((t.attr.value for t in targets if is_self_attribute(t) and t.attr.value in plain & read), None)
            if changed is not None:
                yield Report(statement, f"self.{changed} is a plain attribute of a torchmetrics Metric: update() "
                             f"changes it on each process and compute() reads it as it is, while the states "
                             f"registered with add_state() are synced first (torchmetrics {_TORCHMETRICS} syncs "
                             f"only those), so every process computes with its own '{changed}'",
                             help=f'Register it: self.add_state("{changed}", default=torch.tensor(0), '
                                  f'dist_reduce_fx="sum")')
                break


def _self_attributes_set(function: cst.FunctionDef) -> set[str]:
    """The `self.x` a function assigns."""
    return {target.target.attr.value for node in every_node(function, cst.Assign) for target in node.targets
            if is_self_attribute(target.target)}


def _best_metric_set_on_some_ranks(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`metrics["eval_bench_accuracy"] = score` in a callback, under a test that differs between ranks,
    for the key `TrainingArguments(metric_for_best_model="bench_accuracy")` names: after each
    evaluation every rank's Trainer looks the key up (`_determine_best_metric`), and the ranks where
    it was not set raise KeyError while the others go on (axolotl#537)."""
    best = analysis.per_file(best_metric)
    if best is None:
        return
    key, named = best
    for assign in every_node(analysis.module, cst.Assign):
        target = assign.targets[0].target if len(assign.targets) == 1 else None
        if not (isinstance(target, cst.Subscript) and len(target.slice) == 1
                and isinstance(target.slice[0].slice, cst.Index)
                and isinstance(target.slice[0].slice.value, cst.SimpleString)
                and target.slice[0].slice.value.evaluated_value == key):
            continue
        for part in reversed(path_to(analysis.module, assign) or ()):
            if isinstance(part, cst.If) and test_varies(analysis, part.test) is not None:
                phrase = analysis.test_phrase(part.test, assign in every_node(part.body, cst.Assign))
                yield Report(assign, f"'{analysis.code(target)}' is set only on ranks where {phrase}, and after each "
                             f"evaluation the Trainer looks up metric_for_best_model='{named}' on every rank "
                             f"(_determine_best_metric, transformers {apis.TRANSFORMERS}): the other ranks raise "
                             f"KeyError while these go on to the next collective",
                             help="Set the metric on every rank: broadcast it from the rank that computes it")
                break


# What a LightningModule's `training_step` returns goes through the Trainer's backward, where DDP's
# reducer all-reduces each gradient as autograd produces it (lightning 2.6.6: strategies/ddp.py wraps
# the module in DistributedDataParallel; torch nn/parallel/distributed.py `self.reducer = dist.Reducer(`).
_LIGHTNING = frameworks.load().versions["lightning"]
_NEW_TENSORS = frozenset(f"torch.{name}" for name in NEW_TENSOR_FUNCTIONS)


def _losses_apart_from_the_model(analysis: ModuleAnalysis) -> Iterator[Report]:
    """A LightningModule's `training_step` that returns None, or a new tensor no parameter reaches
    (`torch.tensor(0.0, requires_grad=True)`), under a test that differs between ranks (a batch
    without targets), while its other returns compute the loss: on those ranks the Trainer's
    backward reaches no parameter (or, for None, is skipped), so DDP's gradient all-reduce never
    starts there and the others wait in it (pytorch-lightning#12190, #5243)."""
    for method, _ in _lightning_hooks(analysis, "training_step"):
        returns = _own_returns(method)
        detached = [node for node in returns if _apart_from_the_model(analysis, node.value, method)]
        if len(detached) == len(returns):
            continue
        for node, where, why in _under_a_varying_test(analysis, method, detached):
            what = "None, which skips the backward and the optimizer step" if _returns_none(node) \
                else f"'{analysis.code(node.value)}', a new tensor that no parameter reaches"
            yield Report(node, f"training_step() returns {what}, only {where} "
                         f"({why}): the Trainer's backward through DistributedDataParallel all-reduces each "
                         f"gradient as the parameters get one, which never happens on those ranks, so the "
                         f"others wait in the gradient all-reduce and every rank hangs until the timeout",
                         help="Return a loss computed from the model on every rank: multiply it by zero where "
                              "the batch has nothing to learn from (`loss = model_loss * 0`)")


def _loss_helpers_apart_from_the_model(analysis: ModuleAnalysis) -> Iterator[Report]:
    """A loss function of the module that returns a new tensor no parameter reaches
    (`torch.zeros((), requires_grad=True)` for a batch without a positive pair) under a test that
    differs between ranks, while its other returns compute the loss, and whose result is the loss
    of a backward through a wrapped model (`accelerator.backward(supcon(emb, labels))`, a
    training_step's `return supcon(...)`): on those ranks no parameter gets a gradient, so the
    wrapper's gradient all-reduce never starts there and the others wait in it (pytorch#23425)."""
    seen: set = set()
    for line, helper_call, scope in _losses_handed_to_backward(analysis):
        function = _own_loss_function(analysis, helper_call, scope)
        if function is None or function in seen:
            continue
        seen.add(function)
        returns = [node for node in _own_returns(function) if not _returns_none(node)]
        detached = [node for node in returns if _apart_from_the_model(analysis, node.value, function)]
        if not detached or len(detached) == len(returns):
            continue
        handed = analysis.divergence_as_called(function, helper_call, scope)
        for node, where, why in _under_a_varying_test(analysis, function, detached, handed):
            there = "the backward raises 'element 0 of tensors does not require grad and does not have a " \
                "grad_fn' on those ranks while the others wait in the wrapped model's gradient all-reduce" \
                if argument_value(node.value, None, "requires_grad") is None else \
                "the wrapped model's gradient all-reduce, run as the parameters get gradients, never starts " \
                "on those ranks, so the others wait in it and every rank hangs until the timeout"
            yield Report(node, f"{function.name.value}() returns '{analysis.code(node.value)}', a new tensor that "
                         f"no parameter reaches, only {where} ({why}), and {line}: "
                         f"{there}",
                         help="Return a loss computed from the model's output on every rank: multiply it by zero "
                              "where the batch has nothing to learn from (`emb.sum() * 0`)")


def _losses_handed_to_backward(analysis: ModuleAnalysis) -> Iterator[tuple[str, cst.Call, cst.CSTNode]]:
    """(what takes the loss, the call that made it, its scope) for each loss a backward through a
    wrapped model takes that a call made: `loss = supcon(...)` then `accelerator.backward(loss)`,
    `supcon(...).backward()`, a LightningModule's `return supcon(...)` from training_step."""
    for site in analysis.calls:
        if not site.api.qualified_name.endswith(".backward") or not isinstance(site.call, cst.Call) \
                or not isinstance(site.call.func, cst.Attribute):
            continue
        loss = site.call.func.value if site.api.qualified_name == "torch.Tensor.backward" \
            else argument_value(site.call, 0, "loss")
        line = f"line {analysis.position(site.call).start.line} backs it through {analysis.code(site.call.func)}()"
        for made in _loss_values(analysis, loss, site.scope):
            yield line, made, site.scope
    for method, _ in _lightning_hooks(analysis, "training_step"):
        for node in _own_returns(method):
            if isinstance(node.value, cst.Call):
                yield "training_step() returns it to the Trainer's backward through DistributedDataParallel", \
                    node.value, method


def _loss_values(analysis: ModuleAnalysis, loss: Optional[cst.BaseExpression], scope: cst.CSTNode) -> list[cst.Call]:
    """The call `loss` is, or the calls a name `loss` is assigned from in `scope` where nothing
    else is added to it (`loss += aux` keeps the other terms' graph)."""
    if isinstance(loss, cst.Call):
        return [loss]
    if not isinstance(loss, cst.Name) or any(isinstance(aug.target, cst.Name) and aug.target.value == loss.value
                                             for aug in every_node(scope, cst.AugAssign)):
        return []
    values = analysis.values_in_scope(loss.value, scope)
    return values if values and all(isinstance(value, cst.Call) for value in values) else []


def _own_loss_function(analysis: ModuleAnalysis, call: cst.Call, scope: cst.CSTNode) -> Optional[cst.FunctionDef]:
    """The module's function (`supcon(...)`) or the scope's class's method (`self.supcon(...)`) `call` calls."""
    if isinstance(call.func, cst.Name):
        return analysis.own_function(call.func.value)
    klass = analysis.class_of(scope) if isinstance(scope, cst.FunctionDef) else None
    if klass is None or not is_self_attribute(call.func):
        return None
    name = call.func.attr.value
    return next((method for method, owner in analysis.methods_named(name) if owner is klass), None)


def _batches_dropped_by_the_collator(analysis: ModuleAnalysis) -> Iterator[Report]:
    """A collate function of a module that trains a LightningModule, returning None under a test on
    the rank's own samples (every record of the batch failed to decode): the Trainer skips a None
    batch on that process (lightning 2.6.6, loops/training_epoch_loop.py:330), so its DDP gradient
    all-reduce for the step never starts while the others wait in it (pytorch-lightning#6753)."""
    if not any(True for _ in _lightning_hooks(analysis, "training_step")):
        return
    names = analysis.once(collator_functions) & _collating_records_that_fail(analysis)
    for function in analysis.module.body:
        if not (isinstance(function, cst.FunctionDef) and function.name.value in names):
            continue
        dropped = [node for node in _own_returns(function) if _returns_none(node)]
        for node, where, why in _under_a_varying_test(analysis, function, dropped):
            yield Report(node, f"{function.name.value}() collates this process's batches and returns None "
                         f"{where} ({why}): the Trainer skips a None batch on that process "
                         f"only (lightning {_LIGHTNING}, loops/training_epoch_loop.py:330), so its gradient all-reduce "
                         f"for the step never starts while the other processes wait in it, and every rank hangs "
                         f"until the timeout",
                         help="Return a batch on every process: keep the bad records with a mask the loss "
                              "multiplies by zero, or filter the records before the sampler shards them")


def _collating_records_that_fail(analysis: ModuleAnalysis) -> set[str]:
    """The names handed as `collate_fn=` to a DataLoader of one of the module's datasets whose
    `__getitem__` returns None for some records (a record that fails to decode): only then can a
    batch hold nothing to collate on one process."""
    classes = {node.name.value: node for node in analysis.module.body if isinstance(node, cst.ClassDef)}
    found = set()
    for call in every_node(analysis.module, cst.Call):
        collate = argument_value(call, None, "collate_fn")
        dataset = argument_value(call, 0, "dataset")
        if last_name(call.func) != "DataLoader" or not isinstance(collate, cst.Name) \
                or not (isinstance(dataset, cst.Call) and isinstance(dataset.func, cst.Name)):
            continue
        klass = classes.get(dataset.func.value)
        items = [m for m in (klass.body.body if klass is not None else ()) if isinstance(m, cst.FunctionDef)
                 and m.name.value == "__getitem__"]
        if any(_returns_none(node) for item in items for node in _own_returns(item)):
            found.add(collate.value)
    return found


def _epoch_left_on_some_ranks(analysis: ModuleAnalysis) -> Iterator[Report]:
    """A LightningModule's `on_train_batch_start` that returns -1 under a test that differs between
    ranks (an empty batch that a per-rank stream yields when it runs out): the Trainer leaves the
    epoch's loop on those ranks only (lightning 2.6.6, loops/training_epoch_loop.py:337
    `should_skip_rest_of_epoch = response == -1`), while the others go on to the next step's
    gradient all-reduce (pytorch-lightning#21296)."""
    for method, _ in _lightning_hooks(analysis, "on_train_batch_start"):
        leaving = [node for node in _own_returns(method) if _is_minus_one(node.value)]
        for node, where, why in _under_a_varying_test(analysis, method, leaving):
            yield Report(node, f"on_train_batch_start() returns -1, which makes this process's Trainer leave the "
                         f"epoch (lightning {_LIGHTNING}, loops/training_epoch_loop.py:337), only {where} "
                         f"({why}): the other processes go on to the next step's "
                         f"gradient all-reduce without it, and every rank hangs until the timeout",
                         help="Decide on every rank together: all-reduce the flag (MAX) before returning -1, or "
                              "give every rank the same number of batches")


# Lightning hooks the Trainer calls inside fit()'s loops: after each, every rank goes on to the next
# step's DDP gradient all-reduce, or to a callback's collective (ModelCheckpoint's barrier).
_LOOP_HOOKS = frozenset({"training_step", "validation_step", "on_train_batch_start", "on_train_batch_end",
                         "on_validation_batch_start", "on_validation_batch_end", "on_train_epoch_start",
                         "on_train_epoch_end", "on_validation_start", "on_validation_end",
                         "on_validation_epoch_start", "on_validation_epoch_end", "on_before_backward",
                         "on_after_backward", "on_before_optimizer_step", "on_before_zero_grad"})


def _hooks_raising_on_some_ranks(analysis: ModuleAnalysis) -> Iterator[Report]:
    """A Lightning callback's or LightningModule's loop hook that raises, under a test that differs
    between ranks, an exception the module (or optuna's study, for TrialPruned) catches: a pruning
    callback testing `trainer.callback_metrics["val_loss"]` logged without sync_dist=True. fit()
    ends on those ranks, which go on as if the run were over, while the others go on to the next
    collective (optuna-examples#101). An exception nobody catches fails the process, and the
    launcher stops the job."""
    caught = _caught_names(analysis.module) | {"TrialPruned"}
    hooks = [(method, klass) for name in sorted(_LOOP_HOOKS) for method, klass in analysis.methods_named(name)]
    for method, klass in hooks:
        if not analysis.derives_from(klass, ("lightning", "pytorch_lightning"), ("LightningModule", "Callback")):
            continue
        raises = [node for node in every_node(method.body, cst.Raise) if node.exc is not None
                  and last_name(node.exc.func if isinstance(node.exc, cst.Call) else node.exc) in caught
                  and not _caught_or_nested(method, node)]
        for node, where, why in _under_a_varying_test(analysis, method, raises):
            raised = analysis.code(node.exc.func if isinstance(node.exc, cst.Call) else node.exc)
            yield Report(node, f"{method.name.value}() raises {raised} only {where} ({why}), and it is caught "
                         f"around fit(): fit() ends on those ranks, which go on as if the run were over, while the "
                         f"Trainer on the others goes on to the next collective (DDP's gradient all-reduce, a "
                         f"checkpoint's barrier) and every rank hangs until the timeout",
                         help="Decide on every rank together: log the value with sync_dist=True, or all-reduce the "
                              "decision before raising")


def _caught_names(module: cst.Module) -> set[str]:
    """The names of the exception classes the module's handlers catch (`except Pruned:`)."""
    types = [handler.type for handler in every_node(module, cst.ExceptHandler) if handler.type is not None]
    return {last_name(element.value) for kind in types
            for element in (kind.elements if isinstance(kind, cst.Tuple) else [cst.Element(kind)])} - {None}


def _caught_or_nested(method: cst.FunctionDef, node: cst.CSTNode) -> bool:
    """Whether `node` is in the body of a `try` of `method` (a handler may catch what it raises), or
    in a function defined inside it."""
    path = path_to(method.body, node) or ()
    return any(isinstance(part, cst.FunctionDef) or (isinstance(part, cst.Try) and inner is part.body)
               for part, inner in zip(path, (*path[1:], node)))


def _submodules_skipped_under_ddp(analysis: ModuleAnalysis) -> Iterator[Report]:
    """A submodule that the `forward` of a class wrapped in DistributedDataParallel (without
    `find_unused_parameters=True`) runs only under a test on the step's data
    (analysis.unused_parameters, mmdetection3d#488)."""
    for skipped in skipped_submodules(analysis):
        name = skipped.klass.name.value
        runs = f"is skipped in {name}.{skipped.method}() where '{analysis.code(skipped.test)}' holds" \
            if skipped.skipped_by is not None else \
            f"runs in {name}.{skipped.method}() only where '{analysis.code(skipped.test)}' holds"
        line = analysis.position(skipped.wrapping).start.line
        wrapped = f"the Trainer at line {line} wraps {name} in DistributedDataParallel (its DDP strategy) without " \
            "find_unused_parameters=True" if skipped.method != "forward" else \
            f"{name} is wrapped in DistributedDataParallel without find_unused_parameters=True (line {line})"
        yield Report(skipped.skipped_by or skipped.call, f"{analysis.code(skipped.call.func)}() {runs}, a test on the "
                     f"step's data, and {wrapped}: in a step that skips it, DDP's reducer waits "
                     f"for gradients of its parameters that never come, so that process's next forward fails with "
                     f"'Expected to have finished reduction in the prior iteration' while the others wait in the "
                     f"gradient all-reduce",
                     help="Run the submodule at every step and mask its contribution out of the loss (`loss + "
                          "head(h).sum() * 0`), or build DDP with find_unused_parameters=True")


def _outputs_used_sometimes_under_ddp(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`logits, s_feat = student(x)` of a module whose `forward` returns a submodule's output
    (`self.proj(h)`) that only a test on the step's data puts into the loss (`if alpha > 0: loss =
    loss + alpha * mse(s_feat, t)`), under DDP without `find_unused_parameters=True`
    (analysis.unused_parameters.outputs_used_sometimes)."""
    for found in outputs_used_sometimes(analysis):
        name = found.klass.name.value
        yield Report(found.backward, f"{analysis.code(found.backward.func)}() runs DDP's gradient all-reduce, and "
                     f"'{found.name}' ({name}.forward's {found.submodule}() output) enters the loss only where "
                     f"'{analysis.code(found.test)}' holds, a test on the step's data, while {name} is wrapped in "
                     f"DistributedDataParallel without find_unused_parameters=True (line "
                     f"{analysis.position(found.wrapping).start.line}): in a step where it does not, "
                     f"{found.submodule}'s parameters get no gradient, so that process's next forward fails with "
                     f"'Expected to have finished reduction in the prior iteration' while the others wait in the "
                     f"gradient all-reduce",
                     help="Keep the term in the loss at every step, weighted by zero where it should not count "
                          "(`loss + alpha * mse(s_feat, t)`), or build DDP with find_unused_parameters=True")


_FABRIC = "lightning.fabric.fabric.Fabric"


def _plateau_on_own_values(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`self.log("val_loss", loss)` without `sync_dist=True` in a LightningModule whose
    `configure_optimizers` returns a ReduceLROnPlateau monitoring "val_loss"
    (logged_metrics.plateau_monitors): Lightning steps the scheduler with each process's own logged
    value, so each process lowers its learning rate on its own epochs and the replicas drift apart,
    silently. (EarlyStopping and ModelCheckpoint agree on their decisions with reduce_boolean_decision.)"""
    monitors = analysis.per_file(plateau_monitors)
    for klass in every_node(analysis.module, cst.ClassDef) if monitors else ():
        monitored = monitors.get(klass.name.value)
        if monitored is None or not analysis.derives_from(klass, ("lightning", "pytorch_lightning"), ("LightningModule",)):
            continue
        key, where = monitored
        for method in (m for m in klass.body.body if isinstance(m, cst.FunctionDef)):
            for call in every_node(method, cst.Call):
                if _logs_own_value(call, key):
                    yield Report(call, f"self.log('{key}', ...) logs this process's own value (no sync_dist=True), and "
                                 f"the ReduceLROnPlateau of configure_optimizers monitors '{key}' (line {where}): "
                                 f"Lightning steps it with each process's own value (lightning {_LIGHTNING}, "
                                 f"loops/training_epoch_loop.py:491), so each process lowers its learning rate on its "
                                 f"own epochs and the replicas drift apart, with no error",
                                 help="Log it with sync_dist=True, so every process monitors the mean")


def _logs_own_value(call: cst.Call, key: str) -> bool:
    """`self.log(key, value)` without `sync_dist=True`, of a value other than an attribute of the
    module (a torchmetrics Metric there is synced by its own compute)."""
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "log"
            and isinstance(call.func.value, cst.Name) and call.func.value.value == "self"):
        return False
    name, value = argument_value(call, 0, "name"), argument_value(call, 1, "value")
    synced = argument_value(call, None, "sync_dist")
    own = synced is None or isinstance(synced, cst.Name) and synced.value == "False"
    return own and isinstance(name, cst.SimpleString) and name.evaluated_value == key and value is not None \
        and not isinstance(value, cst.Attribute)


def _wrapper_bypassed(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`model.backbone(x)` on the module `fabric.setup(model, ...)` returned, in a loop that runs
    `fabric.backward(loss)` and never calls that module itself: Fabric hands back the original
    submodule, the forward never goes through DistributedDataParallel, whose reducer is then never
    armed, and the backward all-reduces no gradient: each process trains its own copy, with no
    error (e2eAIOK#198)."""
    for function in every_node(analysis.module, cst.FunctionDef):
        wrapped = _fabric_modules(analysis, function)
        loops = [loop for kind in (cst.For, cst.While) for loop in every_node(function.body, kind)] if wrapped else []
        for loop in loops:
            calls = list(every_node(loop.body, cst.Call))
            if not any(isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward"
                       and analysis.receiver_class(call.func.value, function) == _FABRIC for call in calls):
                continue
            if any(isinstance(call.func, cst.Name) and call.func.value in wrapped for call in calls):
                continue  # a forward through the wrapper arms the reducer for the whole graph
            bypass = next((call for call in calls if isinstance(call.func, cst.Attribute)
                           and isinstance(call.func.value, cst.Name) and call.func.value.value in wrapped), None)
            if bypass is not None:
                model = bypass.func.value.value
                yield Report(bypass, f"{analysis.code(bypass.func)}() runs the original submodule, not the "
                             f"DistributedDataParallel wrapper that fabric.setup() made of '{model}' (lightning "
                             f"{_LIGHTNING}, fabric/wrappers.py:244 hands the original module's attributes through): "
                             f"no forward of the step goes through the wrapper, so fabric.backward() all-reduces no "
                             f"gradient and each process trains its own copy, with no error",
                             help=f"Call '{model}(...)' itself, and return what the step needs from its forward")
                break


def _fabric_modules(analysis: ModuleAnalysis, function: cst.FunctionDef) -> set[str]:
    """The names `function` binds to what `fabric.setup(...)` returns (the first of a tuple)."""
    found = set()
    for assign in every_node(function.body, cst.Assign):
        call = assign.value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value in ("setup", "setup_module")
                and analysis.receiver_class(call.func.value, function) == _FABRIC):
            continue
        target = assign.targets[0].target
        first = target.elements[0].value if isinstance(target, (cst.Tuple, cst.List)) and target.elements else target
        if isinstance(first, cst.Name):
            found.add(first.value)
    return found


# Accelerate's operations that, in debug mode, first gather every process's shapes with
# gather_object (accelerate 1.15.0: utils/operations.py:372-390 `verify_operation`, on gather,
# broadcast, pad_across_processes and reduce; state.py:184 reads ACCELERATE_DEBUG_MODE once per process).
_VERIFIED_OPERATIONS = frozenset({"gather", "broadcast", "pad_across_processes", "reduce", "gather_for_metrics"})


def _debug_mode_on_some_ranks(analysis: ModuleAnalysis) -> Iterator[Report]:
    """The first of accelerate's verified operations in a module whose process sets
    ACCELERATE_DEBUG_MODE under a test on the rank: there each runs a gather_object of the
    shapes first, which the other ranks never run."""
    where = analysis.environment_where("ACCELERATE_DEBUG_MODE")
    if where is None:
        return
    verified = [site for site in analysis.calls if site.api.short_name in _VERIFIED_OPERATIONS
                and site.api.qualified_name.startswith(("Accelerator.", "accelerate."))]
    first = min(verified, key=lambda site: analysis.position(site.call).start.line, default=None)
    if first is not None:
        yield Report(first.call, f"{analysis.code(first.call.func)}() runs a gather_object() of every process's "
                     f"shapes first where ACCELERATE_DEBUG_MODE is set (accelerate 1.15.0, utils/operations.py:390), "
                     f"and {where} sets it under a test on the rank: the ranks' collectives stop pairing up, and "
                     f"every rank hangs until the timeout", help="Set ACCELERATE_DEBUG_MODE on every rank or on none")


# What a Lightning Trainer runs at a global step: under manual optimization global_step counts the
# optimizer's steps (lightning 2.6.6, loops/training_epoch_loop.py:117, loops/optimization/manual.py:137).
_STEP_KEYED = ("every_n_train_steps", "max_steps", "val_check_interval")


def _manual_steps_on_some_ranks(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`opt.step()` under a test that differs between ranks in the `training_step` of a
    LightningModule with manual optimization, in a module that configures something the Trainer
    runs at a global step (a step-keyed checkpoint, validation or end): global_step counts the
    optimizer's steps there, so it drifts apart between ranks, and the Trainer's collectives at
    those steps stop pairing up."""
    keyed = next((word for word in _STEP_KEYED if word in analysis.whole_text()), None)
    if keyed is None:
        return
    for method, klass in _lightning_hooks(analysis, "training_step"):
        if not _optimizes_manually(klass):
            continue
        optimizers = {name for assign in every_node(method.body, cst.Assign)
                      if "self.optimizers(" in analysis.code(assign.value)
                      for target in assign.targets for name in target_names(target.target)}
        steps = [call for call in every_node(method.body, cst.Call) if isinstance(call.func, cst.Attribute)
                 and call.func.attr.value == "step" and isinstance(call.func.value, cst.Name)
                 and call.func.value.value in optimizers]
        for call, where, why in _under_a_varying_test(analysis, method, steps):
            yield Report(call, f"{analysis.code(call.func)}() runs only {where} ({why}): "
                         f"under manual optimization Lightning counts global_step in the optimizer's steps "
                         f"(lightning {_LIGHTNING}, loops/optimization/manual.py:137), so it drifts apart between "
                         f"ranks, and what the Trainer runs at a global step ({keyed}) runs its collectives at a "
                         f"different step on each rank, and every rank hangs until the timeout",
                         help="Step on every rank (with zeroed gradients where the batch has nothing to learn), or "
                              "agree on the decision first (all-reduce the flag)")


def _optimizes_manually(klass: cst.ClassDef) -> bool:
    """`self.automatic_optimization = False` in one of its methods, or as a class attribute."""
    return any(isinstance(assign.value, cst.Name) and assign.value.value == "False" and any(
        (isinstance(target.target, cst.Attribute) and target.target.attr.value == "automatic_optimization")
        or (isinstance(target.target, cst.Name) and target.target.value == "automatic_optimization")
        for target in assign.targets) for assign in every_node(klass.body, cst.Assign))


def _lightning_hooks(analysis: ModuleAnalysis, name: str) -> Iterator[tuple[cst.FunctionDef, cst.ClassDef]]:
    for method, klass in analysis.methods_named(name):
        if analysis.derives_from(klass, ("lightning", "pytorch_lightning"), ("LightningModule",)):
            yield method, klass


def _own_returns(method: cst.FunctionDef) -> list[cst.Return]:
    """The method's returns, not those of functions defined inside it."""
    return [node for node in every_node(method.body, cst.Return)
            if not any(isinstance(part, cst.FunctionDef) for part in path_to(method.body, node) or ())]


def _returns_none(node: cst.Return) -> bool:
    return node.value is None or is_none(node.value)


def _under_a_varying_test(analysis: ModuleAnalysis, method: cst.FunctionDef, nodes: list,
                          divergence=None) -> Iterator[tuple[cst.CSTNode, str, str]]:
    """Each of `nodes` under an `if` whose test differs between ranks (by `divergence`, else by
    what the method's callers hand it), or in the handler of a `try` whose work can fail on some
    ranks only, with where it runs ("where 'not keep.any()' holds") and why."""
    found = divergence or analysis.handed_divergence(method) if nodes else None
    for node in nodes:
        path = list(path_to(method, node) or ())
        for part, inner in zip(path, path[1:]):
            leaves = [leaf for leaf in boolean_leaves(part.test) if leaf in found.tests] \
                if isinstance(part, cst.If) else []
            if leaves:
                yield node, f"where '{analysis.code(part.test)}' holds", found.tests[leaves[0]]
                break
            if isinstance(part, cst.Try) and part in found.raising and isinstance(inner, cst.ExceptHandler):
                caught = f" with {analysis.code(inner.type)}" if inner.type is not None else ""
                yield node, f"where the 'try' at line {analysis.position(part).start.line} fails{caught}", \
                    found.raising[part]
                break


def _is_minus_one(value: Optional[cst.BaseExpression]) -> bool:
    return isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus) \
        and isinstance(value.expression, cst.Integer) and value.expression.value == "1"


def _apart_from_the_model(analysis: ModuleAnalysis, value: Optional[cst.BaseExpression],
                          scope: cst.FunctionDef) -> bool:
    if value is None or is_none(value):
        return True
    return isinstance(value, cst.Call) and bool(analysis.qualified_names(value.func, scope) & _NEW_TENSORS)


# Trainer methods that run collectives once per batch of a dataset, where the dataset comes from
# (the call's own argument, else the Trainer's keyword), and what they run (transformers 5.25.0:
# evaluation_loop gathers every batch, trainer.py:3050-3069). `train` is not among the Trainer
# methods the analysis reads (apis._MAPPED_METHOD_WORDS: too common a name).
_PER_BATCH_DATASETS = {
    "evaluate": ((0, "eval_dataset"), "eval_dataset", "gathers the outputs of every batch"),
    "predict": ((0, "test_dataset"), None, "gathers the outputs of every batch"),
}
# Wrappers whose length is that of an argument they are made from (its position).
_SIZED_BY_ARGUMENT = {"Subset": 1, "TensorDataset": 0, "from_list": 0, "from_dict": 0}


def _resharded_datasets(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`Trainer(..., eval_dataset=Rows(ROWS[rank::world]))` then `trainer.evaluate()`: each rank hands
    the Trainer its own share, whose length differs between ranks, and the Trainer splits it again
    among the processes, so each runs its own number of batches, and of the collectives at each."""
    for site in analysis.calls:
        package, _, method = site.api.qualified_name.rpartition(".")
        entry = _PER_BATCH_DATASETS.get(method) if package.endswith("Trainer") \
            and package.split(".")[0] in ("transformers", "trl") else None
        if entry is None or not isinstance(site.call, cst.Call) or not isinstance(site.call.func, cst.Attribute):
            continue
        own, constructor, runs = entry
        dataset = argument_value(site.call, *own)
        keyword = own[1] if dataset is not None else constructor
        if dataset is None and constructor is not None:
            dataset = analysis.construction_argument(site.call.func.value, constructor, site.scope)
        why = _dataset_length_why(analysis, site, dataset) if dataset is not None else None
        if why is not None:
            yield Report(site.call, f"{site.api.called} {runs}, and its "
                         f"{keyword} '{analysis.code(dataset)}' holds a different number of items on each rank "
                         f"({why}): the Trainer splits each rank's share among the processes again, so the ranks run "
                         "a different number of batches and every rank hangs until the timeout",
                         help="Hand the Trainer the whole dataset on every rank: it gives each process its share")


def _dataset_length_why(analysis: ModuleAnalysis, site: CallSite, dataset: cst.BaseExpression) -> Optional[str]:
    """Why how many items `dataset` holds differs between ranks: by the divergence analysis, or
    as what a Dataset of the module (`Rows(mine)`) or a wrapper (`Subset(ds, mine)`) is made from."""
    why = analysis.divergence.length_at(site.call, dataset)
    if why is not None and why != CONTROL:
        return why
    made = [dataset] if isinstance(dataset, cst.Call) else \
        [value for world in site.reached for value in (analysis.values_in_world(site, dataset, world) or ())]
    for call in (value for value in made if isinstance(value, cst.Call)):
        position = _SIZED_BY_ARGUMENT.get(last_name(call.func) or "")
        if position is None and _is_dataset_class(analysis, call.func):
            position = 0
        held = argument_value(call, position, None) if position is not None else None
        why = analysis.divergence.length_at(site.call, held) if held is not None else None
        if why is not None and why != CONTROL:
            return why
    return None


def _is_dataset_class(analysis: ModuleAnalysis, func: cst.BaseExpression) -> bool:
    """`Rows` for `class Rows(torch.utils.data.Dataset)` of this module."""
    klass = analysis.module_class(func.value) if isinstance(func, cst.Name) else None
    return analysis.derives_from(klass, ("torch",), ("Dataset",))


# An exception a handler may catch where a write fails.
_CATCHES_WRITE_ERRORS = frozenset({"OSError", "IOError", "EnvironmentError", "Exception", "BaseException",
                                   "FileExistsError", "FileNotFoundError", "PermissionError", "IsADirectoryError",
                                   "NotADirectoryError"})


def _failed_writes_swallowed(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`try: fabric.save(path, state)` / `except OSError: ...` without re-raising: the save writes on
    global rank 0 alone before its barrier (apis.WRITES_THEN_WAITS), so a failed write is caught there
    alone and rank 0 goes on while the others wait in the barrier."""
    for site, where, line in _handled(analysis, apis.WRITES_THEN_WAITS, _CATCHES_WRITE_ERRORS):
        yield Report(site.call, f"{site.api.called} writes on global rank 0 alone before its barrier ({where}): "
                     f"the handler at line {line} catches a failed write there alone, and rank 0 goes on while "
                     f"the other ranks wait in the barrier, and every rank hangs until the timeout",
                     help="Let the error propagate on every rank, or agree on it first (all_reduce a failure flag "
                          "after the save), and check the path on every rank before saving")


# Where a metric's forward checks the batch before it syncs (torchmetrics 1.9.0, metric.py:344 calls
# `update`, which validates its input, and :345 `compute`, which syncs with dist_sync_on_step=True).
_CHECKS_THEN_SYNCS = {"torchmetrics.metric.Metric.forward": "metric.py:344, :345"}
_CATCHES_CHECK_ERRORS = frozenset({"RuntimeError", "ValueError", "Exception", "BaseException"})


def _rejected_batches_swallowed(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`try: metric(preds, target)` / `except RuntimeError: skip` for a metric made with
    dist_sync_on_step=True: its update rejects a rank's own batch (a label out of range) before
    the sync, and the handler lets that rank skip the sync the others wait in (ludwig#3562)."""
    for site, where, line in _handled(analysis, _CHECKS_THEN_SYNCS, _CATCHES_CHECK_ERRORS):
        yield Report(site.call, f"{site.api.called} checks the rank's own batch in update() before that sync "
                     f"({where}), and the handler at line {line} lets a rank whose batch it rejects skip the sync the "
                     f"other ranks wait in: every rank hangs until the timeout",
                     help="Drop what the metric would reject before the call, on every rank, or let the error "
                          "propagate")


def _loads_what_rank_zero_saved(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`fabric.save(run_dir / "best.ckpt", state)`, then `fabric.load(run_dir / "best.ckpt", state)`
    in the same function, where the path differs between ranks (a run directory named after each
    process's clock): the save wrote on global rank 0 alone, every rank reads, and the others find
    no file and fail before the barrier rank 0 waits in (pytorch-lightning#5512, OpenTau#396).
    accelerate's `save_state`/`load_state` alike, with no barrier: the main process goes on to its
    next collective (Diffusion-Planner#429)."""
    saved: dict = {}
    for site in analysis.calls:
        keyword, position, _ = apis.MAIN_PROCESS_SAVES.get(site.api.qualified_name, ("path", 0, None))
        if site.api.qualified_name in apis.WRITES_THEN_WAITS or site.api.qualified_name in apis.MAIN_PROCESS_SAVES:
            path = argument_value(site.call, position, keyword) or argument_value(site.call, 0, "filepath")
            if path is not None:
                saved.setdefault((site.scope, analysis.code(path)), site)
    for site in analysis.calls:
        keyword, position, where = apis.READS_THEN_WAITS.get(site.api.qualified_name) \
            or apis.EVERY_PROCESS_LOADS.get(site.api.qualified_name, (None, None, None))
        path = argument_value(site.call, position, keyword) if keyword is not None else None
        writer = saved.get((site.scope, analysis.code(path))) if path is not None else None
        why = analysis.divergence.value_at(site.call, path) if writer is not None else None
        if why:
            yield _load_report(analysis, site, writer, path, why, where)


def _load_report(analysis: ModuleAnalysis, site: CallSite, writer: CallSite, path: cst.BaseExpression, why: str,
                 where: str) -> Report:
    line, saver = analysis.position(writer.call).start.line, analysis.code(writer.call.func)
    if site.api.qualified_name in apis.EVERY_PROCESS_LOADS:
        _, _, written = apis.MAIN_PROCESS_SAVES[writer.api.qualified_name]
        return Report(site.call, f"{site.api.called} reads '{analysis.code(path)}' on every rank ({where}), but that "
                      f"path differs between ranks ({why}) and {saver}() at line {line} wrote the model there on the "
                      f"main process alone ({written}): the other ranks find no file there and fail, and the main "
                      f"process waits in its next collective until the timeout",
                      help="Name the directory once, on the main process, and broadcast it "
                           "(broadcast_object_list) before anything is saved or loaded")
    return Report(site.call, f"{site.api.called} reads '{analysis.code(path)}' on every rank, then waits at a "
                  f"barrier ({where}), but that path differs between ranks ({why}) and "
                  f"{saver}() at line {line} wrote it on global rank 0 alone: the other ranks "
                  f"find no file there and fail before the barrier, where rank 0 waits until the timeout",
                  help="Name the directory once, on rank 0, and broadcast it (fabric.broadcast(path)) "
                       "before anything is saved or loaded")


def _handled(analysis: ModuleAnalysis, methods: dict, errors: frozenset) -> Iterator[tuple[CallSite, str, int]]:
    """Each call of one of `methods` (qualified name -> the lines that prove it) in a `try` whose
    handler swallows one of `errors`: the call, those lines, and the handler's line."""
    for site in analysis.calls:
        where = methods.get(site.api.qualified_name)
        handler = _swallowing_handler(site, errors) if where is not None else None
        if handler is not None:
            yield site, where, analysis.position(handler).start.line


def _swallowing_handler(site: CallSite, errors: frozenset) -> Optional[cst.ExceptHandler]:
    """The handler of the innermost `try` whose body holds the call, where it catches one of
    `errors` and does not raise again."""
    path = path_to(site.scope, site.call) or ()
    for index in range(len(path) - 1, -1, -1):
        node = path[index]
        if isinstance(node, cst.Try) and index + 1 < len(path) and path[index + 1] is node.body:
            return next((handler for handler in node.handlers if _catches(handler, errors)
                         and not ends_in(handler.body, cst.Raise)), None)
    return None


def _catches(handler: cst.ExceptHandler, errors: frozenset) -> bool:
    caught = handler.type
    if caught is None:
        return True
    names = [element.value for element in caught.elements] if isinstance(caught, cst.Tuple) else [caught]
    return any(last_name(name) in errors for name in names)


def _prepared_loops_on_some_ranks(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`for batch in train_loader:` under a rank test, where the loader is a shuffled DataLoader
    that accelerate prepared: the loop starts by broadcasting the shuffling generator's state
    (DataLoaderShard.__iter__), which the other ranks never join."""
    for scope in (analysis.module, *every_node(analysis.module, cst.FunctionDef)):
        for loop in _own_loops(scope):
            if not isinstance(loop.iter, cst.Name):
                continue
            path = path_to(scope, loop) or ()
            test = next((node.test for node in path if isinstance(node, cst.If) and test_varies(analysis, node.test)), None)
            if test is None or not analysis.prepared_shuffled_loader(loop.iter.value, scope, loop):
                continue
            yield Report(loop.iter, f"iterating '{loop.iter.value}' {PREPARED_ITERATION}, and runs only on ranks where "
                         f"{analysis.test_phrase(test, True)}: {_HANG}",
                         help="Iterate it on every rank, or take the preview from the loader before prepare()")


def _own_loops(scope: cst.CSTNode) -> list:
    """The `for` loops of the scope's own code (not of the functions and classes nested in it)."""
    finder = _Loops(scope)
    finder.walk(scope)
    return finder.found


class _Loops(ScopeVisitor):
    def __init__(self, scope: cst.CSTNode) -> None:
        self.scope = scope
        self.found: list = []

    def visit_For(self, node: cst.For) -> None:
        self.found.append(node)


def _row(entry: frameworks.Entry) -> str:
    hops = entry.chain if len(entry.chain) < 3 else (entry.chain[0], entry.chain[-1])
    evidence = "; ".join(f"`{hop}`" for hop in hops) + (" (hand-written)" if entry.hand_written else "")
    when = f"`{entry.when}=True`" if entry.when else ""
    return f"| {entry.framework} `{entry.name.split('.', 1)[1] if entry.kind != 'function' else entry.name}` " \
           f"| `{entry.inside}` | {when} | {evidence} |"
