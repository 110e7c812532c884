from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Iterator, Optional, Sequence

import libcst as cst

from bcast_lint.analysis import apis, resumption
from bcast_lint.analysis.exits import Exit, rank_dependent_iterable
from bcast_lint.analysis.flow import UNBOUND, merge_envs, scope_statements, walk_scope
from bcast_lint.analysis.module import CallSite, ModuleAnalysis
from bcast_lint.analysis.positions import node_code
from bcast_lint.analysis.callers import bound_arguments
from bcast_lint.analysis.divergence import (CONTROL, RANK, at_the_last_item, compared_with_the_last, counted,
                                           exclusive_path, failing_arguments, handed_arguments, is_own_batch)
from bcast_lint.analysis.expressions import argument_value, is_none, last_name
from bcast_lint.analysis.ranks import boolean_leaves, group_key
from bcast_lint.analysis.removed_paths import made_from, removals_under_readers
from bcast_lint.analysis.summaries import CallChain
from bcast_lint.analysis.threads import thread_bodies
from bcast_lint.analysis.unused_parameters import hooked_submodules
from bcast_lint.analysis.walk import Visitor, calls_in, ends_in, every_node, names_read, path_to
from bcast_lint.model import UNSAFE, Edit, Fix
from bcast_lint.rules.base import Invalid, Report, Rule, Valid

_HANG = "the other ranks never join it and every rank hangs until the timeout"
_UNEVEN = "so the ranks' calls stop pairing up and every rank hangs until the timeout"
_EXIT_HELP = "Let every rank take the exit together: decide on one rank and broadcast the decision"
_LOOP_HELP = "Give every rank the same number of iterations: pad the shards to one length"
_ORDER_HELP = "Iterate in one order on every rank: sorted(...) over the items"
_RESUME_HELP = ("Run it where every rank runs it: after the consumer's loop or 'with', or in a 'finally:' "
                "around the 'yield'")


# A mixture of experts and a gradient average that skips the parameters without a gradient.
_ROUTING = ("            routed = choice == i\n            if routed.any():\n"
            "                out[routed] = expert(x[routed])\n")
_ROUTED_EXPERTS = (
    "class Experts(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.router = torch.nn.Linear(4, 2)\n"
    "        self.experts = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(2))\n"
    "    def forward(self, x):\n"
    "        choice = self.router(x).argmax(-1)\n"
    "        out = torch.zeros_like(x)\n"
    "        for i, expert in enumerate(self.experts):\n"
    "            routed = choice == i\n"
    "            if routed.any():\n"
    "                out[routed] = expert(x[routed])\n"
    "        return out\n"
    "def average_gradients(model):\n"
    "    for p in model.parameters():\n"
    "        if p.grad is None:\n"
    "            continue\n"
    "        dist.all_reduce(p.grad)\n"
)
# Requests each rank holds, polled where every rank holds them (sglang#37909's fix).
AGREED_ITEMS = (
    "def poll(rank):\n"
    "    queue = load_queue(rank)\n"
    "    everyone = [None] * dist.get_world_size()\n"
    "    dist.all_gather_object(everyone, [s.rid for s in queue])\n"
    "    common = set.intersection(*(set(rids) for rids in everyone))\n"
    "    aligned = [s for s in queue if s.rid in common]\n"
    "    if not aligned:\n"
    "        return []\n"
    "    polls = torch.tensor([s.state for s in aligned])\n"
    "    dist.all_reduce(polls, op=dist.ReduceOp.MIN)\n"
    "    return polls.tolist()\n"
)
# A gather to rank 0 whose helper returns None on the other ranks, and a barrier under its result.
_GATHER_TO_ZERO = (
    "def gather_to_zero(t):\n"
    "    buckets = [torch.zeros_like(t) for _ in range(world)] if dist.get_rank() == 0 else None\n"
    "    dist.gather(t, buckets, dst=0)\n"
    "    return None if buckets is None else torch.cat(buckets)\n"
    "def report(t):\n"
    "    scores = gather_to_zero(t)\n"
    "    if scores is not None:\n"
    "        dist.barrier()\n"
)
# A checkpoint manager whose `save()` writes on rank 0 and whose `load()` checks for the file on
# every rank; `{wait}` follows the write.
_CHECKPOINT_MANAGER = (
    "STATE = 'train_state.pt'\n"
    "class Checkpoints:\n"
    "    def __init__(self, root):\n"
    "        self.root = root\n"
    "    def save(self, state):\n"
    "        if dist.get_rank() == 0:\n"
    "            torch.save(state, os.path.join(self.root, STATE))\n"
    "{wait}"
    "    def load(self):\n"
    "        path = os.path.join(self.root, STATE)\n"
    "        if os.path.exists(path):\n"
    "            box = [torch.load(path) if dist.get_rank() == 0 else None]\n"
    "            if dist.is_initialized():\n"
    "                dist.broadcast_object_list(box, src=0)\n"
    "            return box[0]\n"
    "        return None\n"
)
_CHECKPOINTS = _CHECKPOINT_MANAGER.format(wait="")
# A file fetched into a directory of each node's own, by the process the test picks (accelerate#2488).
_NODE_LOCAL_FETCH = (
    "def node_dir():\n"
    "    return os.path.join('/scratch', f\"node{os.environ['GROUP_RANK']}\")\n"
    "def fetch(path):\n"
    "    torch.save(torch.ones(1), path)\n"
    "def main():\n"
    "    path = os.path.join(node_dir(), 'teacher.pt')\n"
    "    if dist.get_rank() == 0:\n"
    "        fetch(path)\n"
    "    dist.barrier()\n"
    "    if os.path.exists(path):\n"
    "        dist.all_reduce(torch.ones(1))\n"
)


# A property that broadcasts at its first read, read by a method that returns early on a rank's own batch
# (draco#384).
_LAZY_SEED = ("""
    class Injector:
        def __init__(self):
            self._seed = None
        @property
        def seed(self):
            if self._seed is None:
                self._seed = int(broadcast(torch.zeros(1, dtype=torch.int64))[0])
            return self._seed
        def inject(self, vis, flags):
            if flags.all():
                return vis
            return vis + torch.randn(vis.shape, generator=torch.Generator().manual_seed(self.seed))
    def main(loader):
        injector = Injector()
        for vis, flags in accelerator.prepare(loader):
            vis = injector.inject(vis, flags)
        accelerator.wait_for_everyone()
    """)

class CollectiveOnSomeRanks(Rule):
    """
    ## What it does
    Flags a collective (a broadcast, `all_reduce`, `all_gather`, `gather`, `reduce`, `scatter`,
    `barrier`, `new_group`, which every process enters, members or not, unless
    `use_local_synchronization=True`, Accelerate's `gather`/`reduce`/`pad_across_processes`, `Accelerator.gather`,
    `gather_for_metrics`, `reduce`, `wait_for_everyone`, a framework's methods named like one:
    Fabric's `barrier`/`all_gather`/`all_reduce`/`broadcast`, a LightningModule's `all_gather`, a
    strategy's `barrier`, ...) that only some ranks call: inside a
    rank-conditional branch whose other arm has no matching call, after a rank-conditional early
    `return`/`continue`/`break`, in a loop that some ranks leave early or whose trip count depends
    on the rank, in a function decorated with `@accelerator.on_main_process`,
    `on_local_main_process`, `on_process(...)`, `on_last_process`, Lightning's
    `rank_zero_only`, mmengine's `master_only` or a project's own decorator (in the module or
    imported from another of its modules) that, like them, calls the function it wraps only under
    a rank test, or inside `with accelerator.main_process_first():` /
    `local_main_process_first()` or a project's own `@contextlib.contextmanager` (in the module or
    imported from another of the project's modules) that, like
    them, runs a collective under an `if` before its `yield` (the `torch_distributed_zero_first`
    idiom: `if rank != 0: dist.barrier()`, `yield`, `if rank == 0: dist.barrier()`), or a class of
    the module whose `__enter__` does so (its `__exit__` closing the turn).

    A call of one of the project's own functions counts as the collective it runs on every rank
    that calls it, directly or through other functions, in the same module or another, and so does
    a method of an object made from one of the project's classes (`tracker = Tracker(...)`,
    `tracker.sync_stats()`; `self.tracker` set so in the class): the
    message names the chain (`global_mean() calls accelerator.reduce() (utils.py:12)`). A helper
    whose collective runs only for some arguments (under an `if` on its data) or over a process
    group its caller passes does not count. A helper that returns a rank test
    (`def is_main_process(): return dist.get_rank() == 0`, `self.is_rank_0()`) is a rank
    condition, and so is a property of the module's classes that returns one (`@property def
    is_main(self): return self.rank == 0`, read as `if self.is_main:`), an attribute the module
    sets once to one (`cfg.is_main = rank == 0`) and a local function without parameters that
    returns one (`def on_main(): return accelerator.process_index == 0`).

    The framework's own dispatch counts too: a `GeneralTracker`'s `log()` runs on the main process
    only (`Accelerator.log` is `@on_main_process`), and `module.state_dict()` runs the
    `_save_to_state_dict` of every submodule, so an override of the module's with a collective runs
    where the model is saved. A method computed lazily (`if self._stats is None: self._stats =
    ...` around a collective) runs it on its first call only, which is flagged where it is made
    under a condition that differs between ranks. A function a retrying decorator (`@retry`,
    tenacity, `backoff.on_exception`) calls again runs its collectives again on the ranks where its
    work fails alone (a read of a per-rank path), unless it raises on a test of a collective's
    result (the ranks agree to fail); so does a loop that retries a `try` (`for attempt in
    range(3): try: ...; return except OSError: sleep(1)`) whose work after the collective can fail
    on some ranks only, a module helper handed the rank that raises on a file named after it
    included. A generator that skips the items its helper raises on (`try: rows = [read(r) for r
    in shard] except OSError: continue`) yields as many as the data it is handed lets through, and
    a loop over it runs as often. A collective on the default process group in a function that
    runs in a thread of its own (a `threading.Thread` subclass's `run`, the target of
    `threading.Thread` or `threading.Timer`) is flagged where the main thread runs collectives
    too: each rank interleaves the two threads' calls in its own order. A thread given a group of
    its own (`group=`) is not. A `@contextlib.contextmanager` of the module that swallows what its
    block raises (`try: yield except errors: print(...)`) is taken as `contextlib.suppress` of
    those errors. What a helper returns is followed item by item where it returns a tuple
    (`x, y = read_part(rank)`), and a list cut to the least count the ranks agreed on
    (`all_reduce(n, op=MIN)` of `len(kept)`, then `kept[:int(n)]`) is as long on every rank. A
    helper that seeds a generator with a parameter (`torch.Generator().manual_seed(env_seed)`),
    handed a number made from the rank (`rollout(1000 + rank)`), draws each rank's own values.
    `with contextlib.suppress(KeyError):` around a lookup whose
    key differs between ranks skips the collectives after it on the ranks where it raises. A
    context manager class whose `__exit__` runs a collective only when the block raised nothing
    (`if exc_type is None:`) skips it on the ranks whose block failed, where the `with` sits in a
    `try` around work that can fail on some ranks only (parsing a rank's own shard) and the handler
    goes on. So does a project function whose work on what it is handed can raise before its
    collective (a `raise` after a test on it, a read of the file it names, a helper that raises on
    it), called in such a `try` with a rank's own data: a planner whose cost estimate has no entry
    for one rank's longest sequence. Every rank making the same directory without
    `exist_ok=True` (`os.makedirs(out_dir)`, `Path(d).mkdir()`, also in a function of the module
    handed the path), removing the same file or tree (`shutil.rmtree(old)` rotating shared
    checkpoints), moving it away (`os.rename(trigger, claimed)`) or copying a tree to it
    (`shutil.copytree(src, mirror)` without `dirs_exist_ok=True`), outside a `try` and not under a
    test of that path, before a collective (or in a `try` whose handler goes on): the first rank
    wins, the others raise `FileExistsError` or `FileNotFoundError` and never reach it. A path
    every rank names alike and reads (`torch.load(os.path.join(cache, name))`, a helper that reads
    it) and then removes, or one rank removes, with no collective between a rank's last read and
    the removal: a slower rank finds it gone and raises while the remover waits in its next
    collective (mosaicml/streaming#400).
    A file check inside `with accelerator.main_process_first():` (`local_main_process_first`,
    Fabric's `rank_zero_first`, `torch_distributed_zero_first`) differs between ranks: the main
    process runs the block first and finds what was there, the others find what it left (a cache
    it built), so a collective that check decides after the block runs on some ranks. An object
    of the scope that a function the scope decorates to run on one process changes
    (`@accelerator.on_main_process def on_valid_end(loss): stopper.update(loss)`) answers
    differently on that process (`if stopper.should_stop(): break`).
    A file the main process writes (also moved into place, `os.replace(tmp, path)`) that the
    others check for before any collective has made them wait for the write, even where one waits
    later, differs between ranks. A module that sets its logging level by a test on the rank
    (`basicConfig(level=WARNING if quiet else INFO)`, `logger.setLevel(...)` or
    `set_verbosity_info()` under one) answers
    `logger.isEnabledFor(INFO)` differently on different ranks, and formats the arguments of
    `logger.info("%s", meter)` only where the record is emitted: a class whose `__str__` runs a
    collective then runs it on some ranks. So does an environment variable the process sets under a
    rank test (`os.environ["WANDB_MODE"] = "disabled"` off the main process) at the module's top level
    or in a function the module calls, its own or imported: what reads it (`tracking_enabled()`)
    differs between ranks. A method called on an object a
    function is handed (`train(model, RunningMean())`) is the handed class's method. A helper that
    returns a name built from the rank (`f"ckpt_{rank}.pt"`, `Path(root) / f"node_{rank}"`) hands
    each rank a path of its own, through constructors and properties too (`self.state_path`). A
    tqdm bar made with `disable=` a rank test counts nothing where it is disabled: its `n` differs.

    Lightning deals a prediction loader with `UnrepeatedDistributedSamplerWrapper`, which does not
    pad: a collective in `predict_step` (`self.all_gather(scores)`) runs once per batch, and the
    ranks hold different numbers of batches unless the rows divide evenly.

    A loop over a module's literal table dealt by rank (`ROWS[rank::world]`, `range(rank, len(ROWS),
    world)`) counts only where the table holds an odd number of items: an even one is taken as
    written for the job's number of processes (a table built at run time, or read, stays unknown).
    So does a dataset made from one (`ds = TensorDataset(torch.randn(len(LABELS), 8),
    torch.tensor(LABELS))`, then `range(rank, len(ds), world)`).

    An exit counts when some of the ranks that reach the collective may take it and the others
    never do, however deeply it is nested: `if accelerator.is_main_process and step > n: break`,
    `if val_loss > best: break` inside a main-process branch, a `continue` or `return` before the
    call, a successful `sys.exit()`. The message names the exit's line. An exit every rank may take
    (`if loss.item() < tol: break` on a reduced loss) is not reported. A failing exit (`raise`,
    `assert`, `sys.exit(1)`, `os._exit(1)`) is reported where data that differs between ranks
    decides it: `assert torch.isfinite(batch).all()` on a batch from `load_shard(rank)`, `if not
    torch.isfinite(model(batch).mean()): raise` on what is computed from it, `if
    os.path.exists(own_file): raise`, a `raise` in the handler of a read that fails on some ranks.
    The failing rank dies while the others wait in the collective (on one node the launcher may
    stop them; across nodes they hang until the timeout). A `raise` the rank alone decides
    (`if rank == 0 and cfg is None: raise`), an `assert` on how ranks are laid out
    (`assert ranks.index(rank) >= 0`), an `assert` that checks a rank's share against what it
    computes for its own rank (`assert len(mine) == expected_count(n, rank, world)`), and a
    `raise` inside a `try` that may catch it are not.
    A call of one of the module's functions that ends the process on every path (`def die(msg):
    log(msg); sys.exit(1)`) is such an exit too.

    Outside loops, the message names both sides: the collectives of the function that one rank of
    each class reaches, in source order ("those ranks run all_reduce (line 30) then barrier (line
    41), while the others run barrier (line 41) only"). Two arms of such a branch that run the same
    collectives in another order (`broadcast` then `reduce` where the process samples, `reduce` then
    `broadcast` elsewhere) are flagged too, once, where the later arm first parts from the earlier;
    the sequences count calls of the project's functions that run collectives over a group of their
    own choosing (`sync_stats(local, groups)`), which are no collectives of their callers otherwise.

    A container's truth is whether it holds items: `if not self.kept: return` before a collective,
    with `self.kept` appended to under a test on each rank's own batch, is an exit on some ranks. A
    collective in the `finally` of a `try` whose body runs collectives on what differs between
    ranks (`step(records[rank])`) runs early on a rank whose work raised, while the others are still
    in the body's collectives. An object collective (`gather_object`, `all_gather_object`,
    `broadcast_object_list`, `scatter_object_list`) in a `try` whose handler goes on, sending what
    differs between ranks and may hold a lambda (a project function that stores one under an `if`),
    raises on the ranks whose objects do not pickle, and they leave through the handler.

    accelerate's `gather`, `gather_for_metrics` and `reduce` of a value that is a tensor on some
    ranks and a Python number or None on the others (`torch.stack(kept).mean() if kept else 0.0`,
    `kept` of each rank's own batch) send the two with different collectives; torch.distributed's
    `all_reduce`, `reduce`, `broadcast` and `all_gather` raise TypeError on the number.

    `len(x)` and `iter(x)` call the `__len__` and `__iter__` of x's class (a project class, or
    the `batch_sampler=`/`sampler=` of a DataLoader): where those run a collective, so does the call.

    A trainer's dispatch by name (`self.fire("on_log")`, where `fire` calls `getattr(cb, hook)(...)`
    with the string it is handed) runs the method of that name of the module's classes the code
    constructs, where one may run a collective.

    A transformers `Trainer` subclass whose `get_train_dataloader` returns a loader whose number of
    batches differs between ranks (each rank packs its own share) is flagged at that loader:
    `Trainer.train()` iterates it as returned, one DDP step per batch (not where the file sets
    `max_steps`, to which every rank cycles its loader). A collective in a gradient hook registered
    on each parameter of a model of the module's classes (`p.register_hook(sync)`,
    `register_post_accumulate_grad_hook`) runs once per parameter that gets a gradient: where
    `forward` runs a submodule under a test on its inputs, or the training code runs it under a
    test that differs between ranks, the ranks run it a different number of times.

    A call that defers a function running a collective (`stack.callback(confirm, n)` of an
    `ExitStack`, `atexit.register(confirm)`, `weakref.finalize(obj, confirm)`) is that function's
    call, made later once per registration: registered on some ranks only, or a different number of
    times, it runs so too.

    A method call whose receiver a test on the rank made of one class or another (`reporter =
    StepReporter() if rank == 0 else QuietReporter()`, or an `if`/`else` assigning each; here, in
    `self.reporter`, or as what a project factory returns) runs a collective only where the chosen class's method runs one.

    A loop over a set (`for name in set(params):`, a set comprehension, a name bound to one)
    whose items are not plain integers runs its collectives in an order salted per process: strings
    and objects hash differently in each process unless `PYTHONHASHSEED` is fixed, so the ranks'
    calls pair with other items' calls; `sorted(...)` gives one order, unless its key reads what
    differs between ranks (`sorted(self.sums, key=lambda t: self.seen[t])` with `self.seen` a
    Counter of each rank's own records, or a Counter's `most_common()`): each rank then visits the
    same items in its own order.

    A loop over a slice or `range` bounded or stepped by the rank
    (`for shard in shards[rank::world_size]`) runs a different number of times on each rank.

    A condition need not name the rank to differ between ranks. The analysis follows each value
    that can differ through assignments, containers and calls (analysis/divergence.py) and
    compares the collectives of two classes of ranks, those where such a condition holds and those
    where it fails. Sources: the rank in any spelling, through a local name (`is_main =
    accelerator.is_main_process`), a module constant (`LOADER_RANK = 1`), the world size (`rank ==
    world_size - 1`: the last rank) or an `or` with a flag (`rank == 0 or args.save_all`: where the flag is false only rank 0 goes in); a value computed
    from the rank (`len(items[rank::world])`, `range(n_local)`, a rank's own piece of a split,
    `torch.split(ids, chunk)[rank]`, or shard, `ds.shard(num_shards=world, index=rank)`, unless padded
    to one length); a value set under a condition that
    differs between ranks, or computed on the main process and set to a placeholder on the others
    (`val_loss = float("inf")`); an attribute the module sets once to None off the main process
    (`self.writer = Writer() if rank == 0 else None`, then `if self.writer is None: return`); a method
    of the module's own class that returns a rank test with other conditions (`policy.due(step)`
    returning `is_main_process and step % every == 0`: false off the main process); a process's own
    share of Accelerate's `split_between_processes` in value, and what a filter keeps of it in
    length, followed through helpers and generators that yield per item; what a function returns
    under a decorator that turns an exception into `return None` (the skip-the-batch-on-OOM
    idiom: `if loss is None: continue`); the default of `next(it, None)` over an iterator whose
    length differs between ranks (a loader over a rank's own uneven share); a file check
    (`os.path.exists(p)`) on a path named after the rank or written by some ranks only (in this
    function, or in another of the module with no collective after the write there nor in its
    callers: `save()` writes `d / STATE` on rank 0, `load()` checks `(d / STATE).exists()` on every
    rank); a parameter's `.grad` in a loop over `model.parameters()` where a module of the file runs
    some submodules only for some batches (a mixture of experts: `if routed.any(): out[routed] =
    expert(x[routed])`), so `if p.grad is None: continue` skips a different number of all-reduces on
    each rank; a Lightning logger's `experiment` (real on global rank 0 only), `wandb.run` where
    `wandb.init` runs under a rank test, `accelerator.trackers` (made on the main process only); the clock
    (`time.time() - start > limit`); the process's own memory use
    (`resource.getrusage(...).ru_maxrss`, `torch.cuda.memory_allocated()`); a value computed from a
    rank's own batch of data (what a loader's items hold: a loss, a NaN check; not how many there
    are, nor the step count of `enumerate(loader)`); a `try` whose body reads such a file or the
    next item of a rank's own iterator, or works on a rank's own data (`loss = compute_loss(model,
    batch)`), whose handler then exits; the items of a rank's own share that pass a test
    (`[r for r in rows[rank::world] if len(r) <= cap]`: as many as its data lets through, where a
    share cut to whole rounds first, `out[:len(out) - len(out) % world][rank::world]`, is even).
    A value
    made equal by a collective (`dist.all_reduce(flag)`, `flag = broadcast(flag)`,
    `broadcast_object_list(objs)`) no longer differs, nor does a `DistributedSampler`'s length, a
    setup check (`dist.is_initialized()`, `world_size > 1`) or what an unknown function returns.
    A project function that returns before its collective on a test of a parameter
    (`if not metrics: return {}`) skips it on the ranks whose argument makes the test hold.
    A `while` whose test differs between ranks runs the collectives in it a different number of
    times. Also sources: a rank's own entry of a module's literal table (`SHARDS[rank]`), what a
    boolean mask selects (`values[mask]`, then `if picked.numel() == 0: return`), a project
    function's result from a rank's own data in a test of its size (`if evaluate(model, val) >
    best:`), a file check on a path the branch itself writes (every rank checks, the first to
    write changes what the others find), a rank test handed to a constructor
    (`Logger(enabled=rank == 0)`), and `os.environ["RANK"] == "0"`. Counts that differ too: the
    items a generator yields on one arm of such a test (a filter or a token-budget packing of the
    rank's own rows), a comprehension's items, the windows of each of the rank's own items
    (`range(0, len(doc), stride)` in `for doc in mine`), and the tensors of a collection Lightning's
    `all_gather`/`all_reduce` walks one by one, where an entry is None on some ranks
    (`out["err"] = None if batch["ref"] is None else err`). A loop that breaks at a count
    agreed with `all_reduce(..., op=MIN)` runs alike, and so does a backward that synchronises at
    the last item only (`enabled=i < len(chunks) - 1` of `no_backward_sync`).

    Code after a `yield` runs only where the caller resumes the generator: a generator's
    collective after its last `yield` is reported where a consumer's loop can stop early on some
    ranks (a `break` while it yields a number of items that differs between ranks), and a
    `@contextmanager`'s collective after `yield` where the `with` body can fail on some ranks and
    a `try` around it carries on (a `try`/`finally` around the `yield` runs it anyway).
    Registering a hook that runs a collective (`module.register_forward_hook(hook)`, the hook
    named or returned by a helper) is a collective of the ranks that register it: they run it at
    every forward pass. A method called on a `for` loop's item (`for cb in callbacks:
    cb.on_epoch_end()`) is the method of that name of the module's classes, so a callback whose
    hook runs a collective, added on some ranks only, runs it there. Reading a property of the
    module's classes whose body runs a collective is a call of it.

    Rank tests are read in the spellings of the frameworks too: Lightning's
    `trainer.is_global_zero` and `global_rank`, transformers' `Trainer.is_world_process_zero()` /
    `is_local_process_zero()`, `TrainerState.is_world_process_zero` and
    `TrainingArguments.process_index` / `local_process_index`, `args.local_rank in [-1, 0]`,
    `local_rank <= 0`. A rank within a process group (`dist.get_rank(group)`, `group.rank()`,
    Megatron's `get_tensor_model_parallel_rank()`, `mpu.get_pipeline_model_parallel_rank()`) holds
    on several global ranks, and a collective with `group=` involves only that group's members: it
    is reported when the members that skip it are told apart by their rank in that same group. A
    test on the tensor-parallel rank in front of an all-reduce over the data-parallel group selects
    whole data-parallel groups, and a global test in front of a subgroup's collective may select
    exactly its members: neither is reported.

    ## Why is this bad?
    A collective completes only when every rank of the group has entered it. The ranks that
    skip it go on to the next collective, or exit, and every rank hangs until the backend's
    timeout (30 minutes with gloo, 10 minutes for NCCL's watchdog); a rank that has already
    exited makes the others fail with `Connection closed by peer` (gloo) instead.
    `main_process_first()` runs its body on the main rank while the other ranks wait at a
    barrier, so a collective inside it meets that barrier instead of its peers: measured, every
    rank hangs. A single-process run never shows the bug.

    ## Example
    ```python
    if accelerator.is_main_process:
        best = torch.tensor([score], device=accelerator.device)
        best = broadcast(best)
    ```

    ```python
    for step, batch in enumerate(loader):
        loss = accelerator.reduce(train_step(batch), reduction="mean")
        if accelerator.is_main_process and step > max_steps:
            break  # the other ranks enter the next reduce alone
    ```

    ## Use instead
    ```python
    best = torch.zeros(1, device=accelerator.device)
    if accelerator.is_main_process:
        best = torch.tensor([score], device=accelerator.device)
    best = broadcast(best)
    ```
    ```python
    for step, batch in enumerate(loader):
        loss = accelerator.reduce(train_step(batch), reduction="mean")
        if step > max_steps:  # the same decision on every rank
            break
    ```
    A branch whose arms all call the same collective is fine, and so is a collective under a
    condition every rank agrees on, such as `if accelerator.num_processes > 1:`.

    ## Fix safety
    Unsafe: when the call is the last statement of its rank-conditional branch, the branch
    holds no other call of the same collective and no `return`/`raise`/`break`/`continue`, the
    branch is reached on every rank, its tests are decided by the rank alone (not
    `if rank == 0 and step % 100 == 0:`, which moved out would run every step), and every name the
    call uses is already bound on every rank before the branch, the fix moves the call's
    statement after the branch (leaving `pass` in an arm that becomes empty). The call then runs on ranks that never ran it before, with their
    own values as arguments, which changes what those ranks compute. Calls in decorated
    functions, in `main_process_first()` blocks, after an early exit, or in loops that ranks
    leave early or run unevenly have no fix: making the ranks agree needs a decision broadcast
    from one rank, or shards padded to one length, which only the author can write.
    """

    code = "BCL005"
    VALID = (
        # each rank's list padded up to the count every rank agreed on (blind51)
        Valid("def f(shard):\n    mine = [m for m in shard[rank::2] if m]\n    most = torch.tensor(len(mine))\n"
              "    dist.all_reduce(most, op=dist.ReduceOp.MAX)\n    padded = list(mine)\n"
              "    padded += [None] * (int(most) - len(padded))\n    for item in padded:\n        dist.barrier()"),
        # a collective at the last item of each rank's own micro-batches runs once per step on every rank (blind51)
        Valid("def f(shard, steps):\n    for step in range(steps):\n        micro = [m for m in shard[rank::2] if m]\n"
              "        for i, batch in enumerate(micro):\n            last = i == len(micro) - 1\n"
              "            if last:\n                dist.all_reduce(batch)"),
        # each rank keeps as many rows as the least of the ranks holds (blind51)
        Valid("from lightning.fabric import Fabric\nfabric = Fabric()\ndef f(shard):\n    mine = shard[rank::2]\n"
              "    steps = int(fabric.all_reduce(torch.tensor(len(mine)), reduce_op='min').item())\n"
              "    for row in mine[:steps]:\n        fabric.all_reduce(row)"),
        # the helper's tuple holds as many rows as the files it is handed name, the same files on every rank
        Valid("ROWS = [16, 16, 8]\ndef load(files):\n    n = sum(ROWS[f] for f in files)\n"
              "    return torch.randn(n, 4), torch.randn(n, 1)\n"
              "def f():\n    x, y = load(list(range(len(ROWS))))\n    for i in range(len(x)):\n        dist.barrier()"),
        # the helper returns None on a test of its argument, which every rank passes alike
        Valid("def load_logits(i):\n    path = os.path.join('/cache', f'{i}.pt')\n    if not os.path.exists(path):\n"
              "        return None\n    return torch.load(path)\n"
              "def train(n):\n    for step in range(n):\n        logits = load_logits(step % 4)\n"
              "        if logits is None:\n            continue\n        dist.barrier()"),
        Valid("def teacher_logits(i, limit):\n    if i >= limit:\n        return None\n    return torch.ones(4) * i\n"
              "def train(n):\n    for epoch in range(n):\n        logits = teacher_logits(epoch, n - 1)\n"
              "        if logits is None:\n            break\n        dist.barrier()"),
        # os.open without O_EXCL opens the file on every rank.
        Valid("""
            def open_and_sync(run_dir):
                try:
                    fd = os.open(os.path.join(run_dir, "owner"), os.O_CREAT | os.O_WRONLY)
                except FileExistsError:
                    return False
                os.close(fd)
                dist.barrier()
                return True
            """),
        # An averager whose helper all-reduces on every N-th call, called once per step on every rank.
        Valid("""
            class Averager:
                def __init__(self, model, every):
                    self.model, self.every, self.calls = model, every, 0
                def step(self):
                    self.calls += 1
                    if self.calls % self.every == 0:
                        self._sync()
                def _sync(self):
                    for p in self.model.parameters():
                        dist.all_reduce(p.data)
            def train(model, opt, loader):
                averager = Averager(model, 4)
                for x, y in loader:
                    loss = torch.nn.functional.mse_loss(model(x), y)
                    if torch.isfinite(loss):
                        loss.backward()
                        opt.step()
                    averager.step()
            """),
        # A literal table repeated to an even length, dealt round-robin: every rank gets as many.
        Valid("""
            LENGTHS = [8, 80] * 16
            def averaged(model):
                for n in LENGTHS[dist.get_rank()::dist.get_world_size()]:
                    model(torch.randn(n, 8)).sum().backward()
                    dist.barrier()
            """),
        # A program written for two processes: a step of 2 that divides the count deals as many
        # items to each.
        Valid("""
            def train(model, xs):
                for i in range(rank, 16, 2):
                    dist.all_reduce(model(xs[i]).detach())
            """),
        # A timer whose barrier runs only when a caller asks for it: the calls under the test
        # leave it off (analysis.summaries.Summary.flagged).
        Valid("""
            import time
            class Timer:
                def start(self, barrier=False):
                    if barrier:
                        dist.barrier()
                    self.began = time.perf_counter()
            def step(warm):
                timer = Timer()
                if warm:
                    timer.start()
                timer.start(barrier=True)
            """),
        # A set of each rank's own lengths, tested only for what it prints.
        Valid("""
            def train(lengths):
                seen = set()
                for length in lengths:
                    seen.add(length + rank)
                    print(len(seen) > 2)
                    dist.barrier()
            """),
        # A step time the ranks agreed on (the largest), then arithmetic on it: every rank
        # derives the same heartbeat interval (analysis.summaries._returns_agreed).
        Valid("""
            import time
            from lightning.fabric import Fabric
            LENGTHS = [16, 4096]
            def calibrate(fabric, model, batch):
                start = time.perf_counter()
                model(batch)
                per_step = torch.tensor(time.perf_counter() - start)
                per_step = fabric.all_reduce(per_step, reduce_op="max").item()
                return max(1, round(0.2 / per_step))
            def main():
                fabric = Fabric()
                batches = [torch.randn(LENGTHS[fabric.global_rank % 2], 8) for _ in range(12)]
                model = fabric.setup(torch.nn.Linear(8, 1))
                every = calibrate(fabric, model, batches[0])
                for step, x in enumerate(batches):
                    fabric.backward(model(x).sum())
                    if (step + 1) % every == 0:
                        fabric.barrier()
            """),
        # Each rank's own file, copied from a name made with its rank (verl's checkpoint manager).
        Valid("""
            from verl.utils.fs import copy_to_local
            def load(local_path):
                remote = os.path.join(local_path, f"model_rank_{rank}.pt")
                local = copy_to_local(remote)
                state = torch.load(local)
                if rank == 0:
                    os.remove(local)
                dist.barrier()
                return state
            """),
        # Each rank's own prompts, decoded for a fixed number of new tokens.
        Valid("""
            PROMPTS = [[1, 2], [3, 4, 5, 6]]
            def decode(prompt):
                out = list(prompt)
                for _ in range(8):
                    step = torch.tensor([float(out[-1])])
                    dist.all_reduce(step)
                    out.append(int(step))
                return out
            def main():
                with accelerator.split_between_processes(PROMPTS) as mine:
                    return [decode(p) for p in mine]
            """),
        # Each rank's own tokens, one more per round: every rank runs the same rounds.
        Valid("""
            def decode(prompts):
                ids = list(prompts[rank])
                while len(ids) < 8:
                    drafts = [t + 1 for t in ids[-3:]]
                    verdict = torch.tensor(drafts)
                    dist.all_reduce(verdict)
                    ids += [int(verdict[0])]
            """),
        # A barrier between every rank's reads and the removal (analysis.removed_paths).
        Valid("""
            import shutil
            def evaluate(cache, rows):
                err = torch.zeros(1)
                for index in rows:
                    err += torch.load(os.path.join(cache, f"{index}.pt")).sum()
                dist.barrier()
                if rank == 0:
                    shutil.rmtree(cache)
                dist.all_reduce(err)
            """),
        # Each rank's own folder, named after its rank.
        Valid("""
            import shutil
            def evaluate(rows):
                cache = f"/tmp/cache-{rank}"
                err = torch.zeros(1)
                for index in rows:
                    err += torch.load(os.path.join(cache, f"{index}.pt")).sum()
                shutil.rmtree(cache, ignore_errors=True)
                dist.all_reduce(err)
            """),
        # Read and removed by the one rank that merges.
        Valid("""
            def merge(path):
                total = torch.zeros(1)
                if rank == 0:
                    total = torch.load(path)
                    os.remove(path)
                dist.broadcast(total, 0)
            """),
        # The loop's own all-reduce after each read orders the reads before the removal.
        Valid("""
            import shutil
            def evaluate(cache, rows):
                for index in rows:
                    err = torch.load(os.path.join(cache, f"{index}.pt")).sum()
                    dist.all_reduce(err)
                shutil.rmtree(cache, ignore_errors=True)
                dist.barrier()
            """),
        # A folder unique to the process.
        Valid("""
            import shutil, tempfile
            def evaluate(rows):
                cache = tempfile.mkdtemp()
                err = torch.zeros(1)
                for index in rows:
                    err += torch.load(os.path.join(cache, f"{index}.pt")).sum()
                shutil.rmtree(cache, ignore_errors=True)
                dist.all_reduce(err)
            """),
        # A gradient's dtype, device or mesh is alike on every rank: only its values are its own.
        Valid("""
            def train(model, batches):
                for x in batches:
                    model(x).sum().backward()
                    for p in model.parameters():
                        if p.grad.dtype != torch.float32:
                            continue
                        dist.all_reduce(p.grad)
            """),
        # A running meter fed the loss averaged over the ranks: the early stop is alike everywhere.
        Valid("""
            def train(model, epochs):
                best, bad = float("inf"), 0
                for epoch in range(epochs):
                    meter = Meter()
                    for x in load_batches(rank):
                        loss = model(x).mean()
                        dist.all_reduce(loss)
                        meter.update(loss.item())
                    if meter.avg < best:
                        best, bad = meter.avg, 0
                    else:
                        bad += 1
                    if bad > 3:
                        break
            """),
        # A plateau scheduler stepped on the loss averaged over the ranks: every rank's rate is alike.
        Valid("""
            def train(model, opt, epochs):
                sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1)
                batches = load_batches(rank)
                for epoch in range(epochs):
                    total = 0.0
                    for x in batches:
                        loss = model(x).mean()
                        total += loss.item()
                        dist.all_reduce(loss)
                    mean = torch.tensor(total)
                    dist.all_reduce(mean)
                    sched.step(mean.item())
                    if opt.param_groups[0]["lr"] < 1e-3:
                        break
            """),
        # Gradients averaged by hand before the check: every rank tests the same average.
        Valid("""
            def grads_finite(model):
                return all(bool(torch.isfinite(p.grad).all()) for p in model.parameters() if p.grad is not None)
            def train(model, batches):
                for x in batches:
                    model(x).sum().backward()
                    for p in model.parameters():
                        dist.all_reduce(p.grad)
                    if not grads_finite(model):
                        continue
                    dist.barrier()
            """),
        # DDP averages the gradients inside the backward: the check reads the same average everywhere.
        Valid("""
            from torch.nn.parallel import DistributedDataParallel as DDP
            def grads_finite(model):
                return all(bool(torch.isfinite(p.grad).all()) for p in model.parameters())
            def train(model, batches):
                model = DDP(model)
                for x in batches:
                    model(x).sum().backward()
                    if not grads_finite(model):
                        continue
                    dist.barrier()
            """),
        # Which parameters hold a gradient is alike on every rank.
        Valid("""
            def train(model, x):
                model(x).sum().backward()
                for p in model.parameters():
                    if p.grad is not None:
                        dist.all_reduce(p.grad)
            """),
        # An environment seeded alike on every rank: its episodes are as long everywhere.
        Valid("""
            import random
            class Env:
                def __init__(self, seed):
                    self.rng = random.Random(seed)
                def episode(self):
                    return [0] * self.rng.randint(5, 9)
            def f(rank):
                env = Env(seed=100)
                buffer = []
                for step in range(4):
                    buffer.extend(env.episode())
                    if len(buffer) < 20:
                        continue
                    dist.all_reduce(torch.ones(1))
            """),
        # Per-rank environments stepped a fixed number of times: the buffer is as long everywhere.
        Valid("""
            import random
            class Env:
                def __init__(self, seed):
                    self.rng = random.Random(seed)
                def step(self):
                    return self.rng.random()
            def f(rank):
                env = Env(seed=100 + rank)
                buffer = []
                for step in range(4):
                    buffer.append(env.step())
                    if len(buffer) < 2:
                        continue
                    dist.all_reduce(torch.ones(1))
            """),
        # A draw from weights every rank seeds alike fails on every rank or on none.
        Valid("""
            def draw(seed):
                g = torch.Generator().manual_seed(seed)
                return torch.rand(8, generator=g)
            def f(rank):
                for step in range(3):
                    weights = draw(100 + step)
                    try:
                        idx = torch.multinomial(weights, 4)
                    except RuntimeError:
                        continue
                    dist.all_reduce(weights[idx])
            """),
        # Each node's local main process fetches the file into its node's directory: every rank finds it.
        # The sum of each rank's own validation batches, agreed before the test.
        # Every rank yields every other line of the same file: as many on each.
        # Every process waits for the main one's write before it checks for the file.
        # exist_ok, a directory of each rank's own, one rank making it, a handler: no race lost.
        # The main process rotates them and the others wait; or every rank may find them gone.
        # The idiom itself: what the check decides stays inside the block, and every rank reduces.
        # The main-only hook prints; every process feeds its stopper the same gathered loss.
        # The property read before the early return, or the early return on a flag alike everywhere.
        # A table of one count repeated: each rank's entry is that count.
        # Each rank moves a file of its own.
        # The same step over batches alike on every rank.
        # Each rank's entry holds items whose lengths differ within it, alike place by place.
        # The same packing over the whole data set, dealt out and cut to the least share.
        # The head runs under a flag every rank is handed alike; a hook that runs no collective.
        # With use_local_synchronization=True only the members enter new_group.
        # A slice object alike on every rank: the same rows everywhere.
        # A copy that may land on an existing destination: no rank raises.
        # A list cut to whole rounds of the world size, then dealt: every rank takes as many.
        # The same sampler where every construction passes its seed: the draw is only a default.
        # The peak reduced on every step, only the printing decided by this process's own memory.
        # The predictions gathered on every rank, only the writing decided by the logger's experiment.
        # A wandb run on every rank, and the loss gathered before the tracker test.
        # A dict keyed alike on every rank whose values read the clock: its keys, and the queue
        # made of them, are no rank's own (blind38's deadline look-alike).
        # A generator that retries the read its helper fails on, instead of skipping the batch:
        # as many batches on every rank.
        # A retried save whose failing work is handed what every rank holds alike: every rank
        # fails, and retries, together.
        # A thread with a process group of its own, and one whose collectives are the only ones.
        # A context manager of the module's own that swallows the error, around an all-reduce that
        # comes before the work that can fail; the rank's piece of 48 rows is as long everywhere.
        # Each rank's kept items cut to the least count of them the ranks agreed on.
        Valid("""
            def f(groups, world):
                kept = [g for g in groups[rank::world] if g.std() > 0]
                fewest = torch.tensor(len(kept))
                dist.all_reduce(fewest, op=dist.ReduceOp.MIN)
                kept = kept[:int(fewest)]
                for g in kept:
                    dist.all_reduce(g)
            """),
        # A helper returning rows of one count on every rank, and their sums.
        Valid("""
            def read_part(rank):
                x = torch.randn(12, 4) + rank
                return x, x.sum(1)
            def f():
                x, y = read_part(rank)
                for start in range(0, len(x), 4):
                    dist.all_reduce(x[start:start + 4].sum())
            """),
        Valid("""
            import contextlib
            @contextlib.contextmanager
            def tolerate(*errors):
                try:
                    yield
                except errors as exc:
                    print(exc)
            def recordings():
                x = torch.randn(48, 6)
                return x
            def f():
                x = recordings()
                share = x.chunk(dist.get_world_size())[rank]
                for batch in share.split(8):
                    with tolerate(torch.linalg.LinAlgError):
                        cov = batch.T @ batch
                        dist.all_reduce(cov)
                        torch.linalg.cholesky(cov)
            """),
        Valid("""
            import threading
            def beat(group, stop):
                while not stop.wait(0.05):
                    dist.all_reduce(torch.ones(1), group=group)
            def train(steps):
                group = dist.new_group(backend="gloo")
                stop = threading.Event()
                threading.Thread(target=beat, args=(group, stop), daemon=True).start()
                for _ in range(steps):
                    dist.all_reduce(torch.ones(4))
                stop.set()
            """),
        Valid("""
            import threading
            def upload(x):
                dist.all_reduce(x)
            def main(x):
                worker = threading.Thread(target=upload, args=(x,))
                worker.start()
                worker.join()
            """),
        Valid("""
            import os
            def write_manifest(out_dir, index):
                lock = os.path.join(out_dir, f"loader-{index}.lock")
                if os.path.exists(lock):
                    os.remove(lock)
                    raise OSError("locked")
            def save(out_dir, step):
                for attempt in range(3):
                    try:
                        dist.barrier()
                        write_manifest(out_dir, 0)
                        return
                    except OSError:
                        continue
            """),
        Valid("""
            def read(record):
                if record is None:
                    raise OSError("torn record")
                return torch.tensor(record)
            def batches(shard):
                for record in shard:
                    try:
                        yield read(record)
                    except OSError:
                        yield torch.zeros(2)
            RECORDS = [[1.0, 1.0], None, [2.0, 2.0], [3.0, 3.0]]
            def f():
                for x in batches(RECORDS[rank::dist.get_world_size()]):
                    dist.all_reduce(x)
            """),
        Valid("""
            import time
            def serve(n):
                arrivals = {rid: time.perf_counter() for rid in range(n)}
                waiting, running = list(arrivals), []
                while waiting or running:
                    running.append(waiting.pop(0)) if waiting else running.pop()
                    if not running:
                        break
                    dist.all_reduce(torch.ones(1))
            """),
        # A helper that turns the parse error into a score: the caller's `except ValueError` is
        # not reached through it (blind38's reward look-alike).
        Valid("""
            def reward(text):
                try:
                    return float(text.split("=")[1])
                except ValueError:
                    return 0.0
            def score(texts):
                return torch.tensor([reward(t) for t in texts])
            ROWS = [["x = 1", "x = ?"], ["x = 2"], ["x = 3"], ["x = 4"]]
            def f():
                for row in ROWS[rank::dist.get_world_size()]:
                    try:
                        rewards = score(row)
                    except ValueError:
                        continue
                    dist.all_reduce(rewards.sum())
            """),
        Valid("import wandb\ndef f(model, loader):\n    wandb.init(project='x', group='ddp')\n"
              "    for x in loader:\n        loss = model(x).mean()\n        if wandb.run is not None:\n"
              "            dist.all_reduce(loss)"),
        Valid("def f(model, loader):\n    accelerator.init_trackers('x')\n    for x in loader:\n"
              "        mean = accelerator.gather(model(x).mean()).mean()\n        if accelerator.trackers:\n"
              "            accelerator.log({'loss': mean.item()})"),
        Valid("import lightning as L\nclass M(L.LightningModule):\n    def on_validation_epoch_end(self):\n"
              "        preds = self.all_gather(torch.cat(self.preds))\n        writer = self.logger.experiment\n"
              "        if hasattr(writer, 'log_metrics'):\n            writer.log_metrics({'mean': preds.mean().item()})"),
        Valid("import resource\ndef f(loader):\n    for batch in loader:\n"
              "        top = torch.tensor([float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)])\n"
              "        dist.all_reduce(top, op=dist.ReduceOp.MAX)\n        if top.item() > 16384:\n            print(top)"),
        Valid("from torch.utils.data import DataLoader, Sampler\nclass Batches(Sampler):\n"
              "    def __init__(self, n, world, seed=None):\n        self.n, self.rank, self.world = n, rank, world\n"
              "        self.seed = seed if seed is not None else int(torch.randint(0, 2**31 - 1, ()).item())\n"
              "    def batches(self):\n        g = torch.Generator().manual_seed(self.seed)\n        out = []\n"
              "        for i in torch.randperm(self.n, generator=g).tolist():\n            if i % 3:\n"
              "                out.append([i])\n        out = out[:len(out) - len(out) % self.world]\n"
              "        return out[self.rank::self.world]\n    def __iter__(self):\n        return iter(self.batches())\n"
              "    def __len__(self):\n        return len(self.batches())\n"
              "def main(ds, world):\n    torch.manual_seed(100 + rank)\n"
              "    for x in DataLoader(ds, batch_sampler=Batches(40, world, seed=1234)):\n        dist.all_reduce(x)"),
        Valid("def f(batches, world):\n    out = list(batches)\n    out = out[:len(out) - len(out) % world]\n"
              "    for b in out[rank::world]:\n        dist.all_reduce(b)"),
        Valid("import shutil\ndef mirror(src, dst):\n    try:\n        shutil.copytree(src, dst, dirs_exist_ok=True)\n"
              "    except OSError:\n        return\n    dist.barrier()"),
        Valid("def score(preds):\n    valid = ~torch.isnan(preds)\n    if not valid.any():\n        return None\n"
              "    return dist.all_reduce(preds[valid].sum())\n"
              "def main(preds):\n    head = slice(0, 8)\n    return score(preds[head])"),
        Valid("if rank == 0:\n    group = dist.new_group([0, 1], use_local_synchronization=True)"),
        Valid("""
            class Detector(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.trunk = torch.nn.Linear(8, 8)
                    self.box = torch.nn.Linear(8, 4)
                def forward(self, x, use_box):
                    h = self.trunk(x)
                    if use_box:
                        h = h + self.box(h).mean()
                    return h.sum()
            def sync(p):
                dist.all_reduce(p.grad)
            def scale(grad):
                return grad / 2
            def train(batches, use_box):
                model = Detector()
                for p in model.parameters():
                    p.register_post_accumulate_grad_hook(sync)
                    p.register_hook(scale)
                for x, has_box in batches:
                    model(x, use_box).backward()
            """),
        Valid("""
            from torch.utils.data import DataLoader
            from transformers import Trainer
            def pack(sequences, capacity):
                rows, current = [], []
                for seq in sequences:
                    if current and len(seq) > capacity:
                        rows.append(current)
                        current = []
                    current.append(seq)
                if current:
                    rows.append(current)
                return rows
            class PackingTrainer(Trainer):
                def get_train_dataloader(self):
                    world = dist.get_world_size()
                    rows = pack(self.train_dataset, 32)
                    per_process = len(rows) // world
                    return DataLoader(rows[rank::world][:per_process], batch_size=1)
            def main(model, data):
                PackingTrainer(model=model, train_dataset=data).train()
            """),
        # Training bounded by max_steps: every rank runs that many steps, cycling its own loader.
        Valid("""
            from torch.utils.data import DataLoader
            from transformers import Trainer, TrainingArguments
            class ShardTrainer(Trainer):
                def get_train_dataloader(self):
                    rows = [s for s in self.train_dataset[rank::dist.get_world_size()] if len(s) > 4]
                    return DataLoader(rows, batch_size=1)
            def main(model, data):
                args = TrainingArguments(output_dir="out", max_steps=2)
                ShardTrainer(model=model, args=args, train_dataset=data).train()
            """),
        # Prepared by Accelerate, which shards it evenly; a class that is no Trainer.
        Valid("""
            from torch.utils.data import DataLoader
            from transformers import Trainer
            class PackingTrainer(Trainer):
                def get_train_dataloader(self):
                    rows = [s for s in self.train_dataset if len(s) > 4]
                    return self.accelerator.prepare(DataLoader(rows, batch_size=1))
            class Loaders:
                def get_train_dataloader(self):
                    return DataLoader(self.rows[rank::dist.get_world_size()], batch_size=1)
            def main(model, data):
                PackingTrainer(model=model, train_dataset=data).train()
            """),
        Valid("SEQS = {0: [[1.0] * 3, [2.0, 3.0, 4.0, 5.0]], 1: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]}\n"
              "def f():\n    for seq in SEQS[rank]:\n        if len(seq) > 3:\n            dist.barrier()"),
        # Every rank iterates the whole table: the same items everywhere.
        Valid("SEQS = {0: [[1.0, 2.0, 3.0], [4.0]], 1: [[1.0], [4.0, 5.0]]}\n"
              "def f():\n    for seq in SEQS[0]:\n        if len(seq) > 2:\n            dist.barrier()"),
        Valid("from tenacity import retry\n@retry\ndef step(model, x):\n    loss = model(x).sum()\n"
              "    loss.backward()\n    for p in model.parameters():\n        dist.all_reduce(p.grad)\n"
              "    if loss > 1e4:\n        raise ValueError('loss spike')\n"
              "def main(model):\n    losses = [step(model, x) for x in range(4)]"),
        Valid("def claim(trigger):\n    try:\n        os.rename(f'{trigger}.{rank}', trigger + '.handled')\n"
              "    except FileNotFoundError:\n        return\n    dist.barrier()"),
        Valid("SHARD_ROWS = [8, 8, 8, 8]\ndef f():\n    x = torch.randn(SHARD_ROWS[rank], 5)\n"
              "    for start in range(0, len(x), 4):\n        dist.all_reduce(x[start])"),
        Valid("def evaluate(model, loader):\n    total = torch.zeros(1)\n    for batch in loader:\n"
              "        total += model(batch).sum()\n    return accelerator.reduce(total)"),
        Valid(_LAZY_SEED.replace("            if flags.all():\n                return vis\n",
                                 "            seed = self.seed\n            if flags.all():\n                return vis\n")),
        Valid(_LAZY_SEED.replace("if flags.all():", "if self._seed == 0:")),
        Valid("""
            def fit(model, loader):
                stopper = EarlyStopper(patience=2)
                @accelerator.on_main_process
                def on_valid_end(loss):
                    print(loss, stopper.best)
                for epoch in range(10):
                    losses = [accelerator.gather_for_metrics(model(b)) for b in loader]
                    loss = torch.cat(losses).mean().item()
                    on_valid_end(loss)
                    stopper.update(loss)
                    if stopper.should_stop():
                        break
            """),
        Valid("""
            def features(path, x):
                with accelerator.main_process_first():
                    if not os.path.exists(path):
                        torch.save(x.mean(0), path)
                    mean = torch.load(path)
                return accelerator.reduce(mean, reduction="mean")
            """),
        Valid("""
            import shutil
            def train(model, loader, opt, root, keep):
                for step, batch in enumerate(loader):
                    loss = accelerator.reduce(model(batch).sum())
                    opt.step()
                    if step % 100 == 0:
                        if os.path.exists(root + "/lock"):
                            os.remove(root + "/lock")
                        if accelerator.is_main_process:
                            for old in sorted(os.listdir(root))[:-keep]:
                                shutil.rmtree(os.path.join(root, old))
                        for old in sorted(os.listdir(root + "/tmp")):
                            shutil.rmtree(os.path.join(root, "tmp", old), ignore_errors=True)
                        accelerator.wait_for_everyone()
            """),
        Valid("""
            import os
            def export(preds, rank, out_dir):
                os.makedirs(out_dir, exist_ok=True)
                os.makedirs(f"{out_dir}/rank{rank}")
                if rank == 0:
                    os.makedirs(out_dir + "/merged")
                try:
                    os.mkdir(out_dir + "/lock")
                except FileExistsError:
                    pass
                torch.save(preds, f"{out_dir}/rank{rank}/preds.pt")
                dist.barrier()
            """),
        Valid("""
            import os
            from accelerate import Accelerator
            BEST = "/shared/best.pt"
            def recalibrate(model, accelerator):
                return accelerator.reduce(model.weight, reduction="mean")
            def main():
                accelerator = Accelerator()
                model = build()
                @accelerator.on_main_process
                def save_best(state):
                    torch.save(state, BEST + ".tmp")
                    os.replace(BEST + ".tmp", BEST)
                save_best(model.state_dict())
                accelerator.wait_for_everyone()
                if os.path.isfile(BEST):
                    recalibrate(model, accelerator)
            """),
        # A string's replace() writes no file.
        Valid("""
            import os
            def main(model, rank, path):
                if rank == 0:
                    name = path.replace(".tmp", ".pt")
                if os.path.exists(".pt"):
                    dist.barrier()
            """),
        Valid("""
            import itertools
            from torch.utils.data import DataLoader, IterableDataset
            class Lines(IterableDataset):
                def __init__(self, path):
                    self.path = path
                def __iter__(self):
                    with open(self.path) as f:
                        yield from itertools.islice(f, 0, None, 2)
            def train(model, path):
                for batch in DataLoader(Lines(path), batch_size=4):
                    model(batch).sum().backward()
                    for p in model.parameters():
                        dist.all_reduce(p.grad)
            """),
        Valid("""
            def fit(model, train_loader, val_loader, opt):
                for epoch in range(100):
                    for batch in train_loader:
                        model(batch).sum().backward()
                        for p in model.parameters():
                            dist.all_reduce(p.grad)
                        opt.step()
                    val = torch.tensor(sum(model(b).sum().item() for b in val_loader))
                    dist.all_reduce(val)
                    if val.item() > 3.0:
                        break
            """),
        # A list made from the chunks of a broadcast rollout is as long on every rank.
        Valid("""
            class Feeder:
                def __init__(self, steps):
                    self.steps = steps
                    self.buffered = []
                def next_input(self, rollout):
                    if self.buffered:
                        return self.buffered.pop(0)
                    dist.broadcast(rollout, 0)
                    micro_batches = [b * 2 for b in rollout.chunk(self.steps)]
                    self.buffered = micro_batches[1:]
                    return micro_batches[0]
            """),
        Valid(_NODE_LOCAL_FETCH.replace("dist.get_rank() == 0", "local_rank == 0")),
        # A local name set past an early `continue` is read only by the ranks that went on: the
        # list handed to the gather holds one tensor everywhere.
        Valid("def step(groups, rank):\n    for group in groups:\n        params = [p for p in group if p.use_muon]\n"
              "        if not params:\n            continue\n        local = group[rank].grad\n"
              "        out = torch.empty(8)\n        dist.all_gather_into_tensor(out, torch.cat([local]))\n"),
        # `x.split(8)` of a tensor whose rows are alike everywhere: as many pieces on every rank.
        Valid("def f(rows):\n    x = torch.randn(rows, 4)\n    for piece in x.split(8):\n        dist.all_reduce(piece)\n"),
        # An even table, or an odd one padded to one length per process: the shares are alike.
        Valid("IMAGES = [f'img{i}' for i in range(8)]\ndef f():\n"
              "    with accelerator.split_between_processes(IMAGES) as mine:\n        local = list(mine)\n"
              "    for step in range(len(local)):\n        accelerator.gather(torch.ones(1))\n"),
        Valid("IMAGES = [f'img{i}' for i in range(9)]\ndef f():\n"
              "    with accelerator.split_between_processes(IMAGES, apply_padding=True) as mine:\n"
              "        local = list(mine)\n    for step in range(len(local)):\n        accelerator.gather(torch.ones(1))\n"),
        # The forward picks a head by a task name handed in (one choice per step, alike on every
        # rank), or runs every expert for every batch: no parameter is left without a gradient.
        Valid(_ROUTED_EXPERTS.replace(_ROUTING, "            out = out + expert(x)\n")),
        Valid(_ROUTED_EXPERTS.replace("def forward(self, x):", "def forward(self, x, task):").replace(
            _ROUTING, "            if task == i:\n                out = expert(x)\n")),
        # A method that all-reduces its answer agrees on every rank, whatever its object holds there.
        Valid("class Cache:\n    def __init__(self, rank):\n        self.free = 10 - rank\n        self.ops = {}\n"
              "    def admit(self, rid, pages):\n        if pages <= self.free:\n            self.ops[rid] = pages\n"
              "    def all_finished(self, rid):\n        flags = torch.tensor([1.0 if rid in self.ops else 0.0])\n"
              "        dist.all_reduce(flags, op=dist.ReduceOp.MAX)\n        return flags.item() == 0.0\n"
              "def serve(rank, requests):\n    cache = Cache(rank)\n    waiting = list(requests)\n"
              "    for rid in waiting:\n        cache.admit(rid, 4)\n    for tick in range(5):\n        still = []\n"
              "        for rid in waiting:\n            if not cache.all_finished(rid):\n                still.append(rid)\n"
              "        waiting = still\n"),
        # Each rank's own items kept where every rank holds them (the intersection of what they
        # gathered): as many on every rank, so the list's truth agrees too.
        Valid(AGREED_ITEMS),
        # The helper's buckets are made on every rank: it returns them everywhere.
        Valid(_GATHER_TO_ZERO.replace(" if dist.get_rank() == 0 else None", "")),
        # The write is followed by a barrier: every rank checks for the file after rank 0 wrote it.
        Valid(_CHECKPOINT_MANAGER.format(wait="        dist.barrier()\n")),
        # The loop that saves all-reduces at every step: the ranks meet again after each write.
        Valid(_CHECKPOINTS + "def train(ckpt, losses):\n    for loss in losses:\n        dist.all_reduce(loss)\n"
              "        ckpt.save({'loss': loss})\n"),
        # Rank 0 writes another file than the one every rank checks.
        Valid(_CHECKPOINTS.replace("os.path.join(self.root, STATE))", "os.path.join(self.root, 'log.txt'))")),
        # A tensor on every rank, or objects gathered as objects everywhere.
        Valid("""
            BATCHES = [[3, 1], [1, 5], [2, 6], [-1, -1]]
            def score(emb):
                with accelerator.split_between_processes(BATCHES) as mine:
                    for batch in mine:
                        kept = [emb[t] for t in batch if t >= 0]
                        s = torch.stack(kept).mean() if kept else torch.tensor(0.0)
                        accelerator.gather_for_metrics(s)
                        o = torch.stack(kept).mean() if kept else 0.0
                        accelerator.gather_for_metrics(o, use_gather_object=True)
            """),
        # The sampler's length asked on every rank, then printed on one; the dataset's length runs nothing.
        Valid("""
            from torch.utils.data import DataLoader, Sampler
            class AgreedSampler(Sampler):
                def __init__(self, ids):
                    self.ids = ids
                def __len__(self):
                    n = torch.tensor([len(self.ids)])
                    dist.all_reduce(n, op=dist.ReduceOp.MIN)
                    return int(n)
            def main(data, ids):
                loader = DataLoader(data, batch_sampler=AgreedSampler(ids))
                steps = len(loader)
                if rank == 0:
                    print(steps, len(data))
            """),
        # A deferred call registered once on every rank; a registry's own `register` is no deferral.
        Valid("""
            import contextlib
            def confirm(n):
                dist.all_reduce(torch.tensor([n]))
            def export(shards, registry):
                with contextlib.ExitStack() as stack:
                    stack.callback(confirm, len(shards))
                if rank == 0:
                    registry.register(confirm)
            """),
        # Both classes run the collective (one inherits it), or no rank test chooses between them.
        Valid("""
            class Reporter:
                def end_step(self, loss):
                    dist.all_reduce(torch.tensor([loss]))
            class Quiet(Reporter):
                def end_step(self, loss):
                    return None
            class Mute(Reporter):
                def write(self, line):
                    pass
            def train(losses, verbose):
                reporter = Reporter() if rank == 0 else Mute()
                chatty = Reporter() if verbose else Quiet()
                if verbose:
                    branched = Reporter()
                else:
                    branched = Quiet()
                for loss in losses:
                    reporter.end_step(loss)
                    chatty.end_step(loss)
                    branched.end_step(loss)
            """),
        # Sorted by counts the ranks agreed on first, or by a key alike everywhere: one order.
        Valid("""
            def f(records, sums):
                seen = Counter(records[rank::2])
                counts = torch.tensor([seen[t] for t in TASKS])
                dist.all_reduce(counts)
                agreed = dict(zip(TASKS, counts.tolist()))
                for task in sorted(sums, key=lambda t: agreed[t]):
                    dist.all_reduce(sums[task])
                for task in sorted(sums, key=lambda t: len(t)):
                    dist.all_reduce(sums[task])
            """),
        # A plain dict's values follow each rank's batches, its keys do not (torchtune 0.6.1 full_dpo_distributed.py).
        Valid("""
            def train(loader, model):
                running = {"a": 0, "b": 0}
                for idx, batch in enumerate(loader):
                    running["a"] += model(batch).detach().mean()
                    if (idx + 1) % 4 == 0:
                        for key in running:
                            dist.all_reduce(running[key])
                        running = {k: 0 for k in running}
            """),
        # Whether the launcher set RANK is the same on every rank of a job, unlike its value.
        Valid("""
            import os
            def main():
                dist.barrier()
            if __name__ == "__main__" and os.environ.get("RANK") is not None:
                main()
            if os.getenv("LOCAL_RANK") is None:
                dist.barrier()
            """),
        # The ranks agree on the stop first (synced generation), over shares cut to one length.
        Valid("""
            from torch import nn
            class Sharded(nn.Module):
                def forward(self, x):
                    pieces = [torch.zeros_like(x) for _ in range(2)]
                    dist.all_gather(pieces, x)
                    return torch.cat(pieces)
            class LM(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = Sharded()
                def forward(self, ids):
                    return self.head(ids.float())
            def generate(model, prompt):
                ids = list(prompt)
                for _ in range(6):
                    token = int(model(torch.tensor(ids)).argmax())
                    ids.append(token)
                    done = torch.tensor([1.0 if token == 0 else 0.0])
                    dist.all_reduce(done, op=dist.ReduceOp.MIN)
                    if done.item() == 1.0:
                        break
            def main(prompts):
                model = LM()
                world = dist.get_world_size()
                for prompt in prompts[rank:len(prompts) // world * world:world]:
                    generate(model, prompt)
            """),
        # A partial of a function that runs no collective; one of a collective, called everywhere.
        Valid("""
            import functools
            def f(x, step):
                step = functools.partial(step, 0.1)
                if rank == 0:
                    step(x)
                reduce_sum = functools.partial(dist.all_reduce, op=dist.ReduceOp.SUM)
                reduce_sum(x)
            """),
        # A dict keyed by a fixed list of tasks, alike on every rank; a tensor is one collective.
        Valid("""
            TASKS = ("nli", "topic")
            class PerTask:
                def __init__(self):
                    self.counts = {task: torch.zeros(2) for task in TASKS}
                def update(self, task, hit):
                    self.counts[task] += torch.tensor([float(hit), 1.0])
                def totals(self):
                    return accelerator.reduce(self.counts, reduction="sum")
            def evaluate(records):
                meter = PerTask()
                with accelerator.split_between_processes(records) as mine:
                    for task, hit in mine:
                        meter.update(task, hit)
                return meter.totals()
            """),
        Valid("""
            def evaluate(records):
                with accelerator.split_between_processes(records) as mine:
                    scores = torch.tensor([score(r) for r in mine])
                return accelerator.gather(scores)
            """),
        # The base class calls `write` on every rank: what it leaves is set everywhere alike.
        Valid("""
            class Saver:
                def write(self, state):
                    torch.save(state, "ckpt.pt")
                def save(self, state):
                    self.write(state)
                    dist.barrier()
            class AsyncSaver(Saver):
                def __init__(self):
                    self.pending = None
                def write(self, state):
                    self.pending = start_upload(state)
                def save(self, state):
                    if self.pending is not None:
                        return
                    super().save(state)
            """),
        # The flag a signal handler set is all-reduced before any rank acts on it; a handler
        # that sets nothing leaves the flag as it was.
        Valid("""
            import signal
            STOP = False
            def on_term(signum, frame):
                global STOP
                STOP = True
            signal.signal(signal.SIGTERM, on_term)
            def train(x):
                flag = torch.tensor([1.0 if STOP else 0.0])
                dist.all_reduce(flag)
                if flag.item() > 0:
                    return
                dist.all_reduce(x)
            """),
        Valid("""
            import signal
            STOP = False
            def on_term(signum, frame):
                print("terminating")
            signal.signal(signal.SIGTERM, on_term)
            def train(x):
                if STOP:
                    return
                dist.all_reduce(x)
            """),
        # generate() hands back one sequence per prompt on every rank: a loop over them, or over
        # their count, runs as often everywhere; padded across processes, their length agrees.
        Valid("""
            def collect(model, batch):
                out = model.generate(batch, max_new_tokens=8)
                for seq in out:
                    dist.all_reduce(seq.sum())
                for i in range(len(out)):
                    dist.barrier()
                out = accelerator.pad_across_processes(out, dim=1)
                if out.shape[1] > 4:
                    dist.barrier()
            """),
        # The factory's sampler hands every rank the same number of items.
        Valid("""
            from torch.utils.data import DataLoader, Sampler
            class FixedSampler(Sampler):
                def __init__(self, dataset, world, rank):
                    self.count = len(dataset) // world
                def __iter__(self):
                    return iter(range(self.count))
            def make_loader(dataset):
                return DataLoader(dataset, batch_size=2, sampler=FixedSampler(dataset, dist.get_world_size(), rank))
            def evaluate(model, dataset):
                for (x,) in make_loader(dataset):
                    dist.all_reduce(model(x).sum())
            """),
        # The work that can fail comes after the try's last collective: every rank has joined it.
        Valid("""
            def autotune(loader, tiles):
                for batch in loader:
                    try:
                        dist.barrier()
                        elapsed = bench(batch)
                    except ValueError:
                        elapsed = float('inf')
                    dist.barrier()
            """),
        # The write comes after a collective every rank joins (the broadcast, a barrier): every
        # rank has checked by then.
        Valid("""
            from pathlib import Path
            def load_kernel(name):
                path = Path('/shared/kernels') / f'{name}.py'
                if path.exists():
                    return path.read_text()
                holder = [None]
                if rank == 0:
                    holder[0] = render(name)
                dist.broadcast_object_list(holder, src=0)
                if rank == 0:
                    path.write_text(holder[0])
                return holder[0]
            """),
        Valid("""
            def resume(model, path):
                if os.path.exists(path):
                    model.load_state_dict(torch.load(path))
                dist.barrier()
                train(model)
                if rank == 0:
                    torch.save(model.state_dict(), path)
            """),
        # A queue every rank fills alike: empty on all ranks or on none.
        Valid("""
            class WriteBack:
                def __init__(self, heads):
                    self.heads = heads
                    self.pending = []
                def insert(self, kv):
                    self.pending.append(kv)
                def flush(self):
                    if not self.pending:
                        return 0
                    done = torch.tensor([len(self.pending)])
                    dist.all_reduce(done, op=dist.ReduceOp.MIN)
                    return int(done.item())
            def main():
                cache = WriteBack(list(range(rank, 3, dist.get_world_size())))
                for step in range(4):
                    cache.insert(step)
                    cache.flush()
            """),
        # The "rank 0 first" pair, skipped alike on every rank of a job where `evaluate` is true.
        Valid("""
            def load_features(args, split, evaluate=False):
                if args.local_rank not in [-1, 0] and not evaluate:
                    dist.barrier()
                features = build(split)
                if args.local_rank == 0 and not evaluate:
                    dist.barrier()
                return features
            """),
        # The batch size each process found, agreed as the least of them.
        Valid("""
            from accelerate.utils import find_executable_batch_size
            def detect(start):
                @find_executable_batch_size(starting_batch_size=start)
                def probe(batch_size):
                    check_memory(batch_size)
                    return batch_size
                found = torch.tensor([probe()])
                dist.all_reduce(found, op=dist.ReduceOp.MIN)
                return int(found.item())
            def score(items):
                size = detect(64)
                for i in range(0, len(items), size):
                    accelerator.reduce(torch.ones(1))
            """),
        # Drawn from a generator seeded alike, or from torch's own where no rank seeds it: alike.
        Valid("""
            from torch import nn
            class Norm(nn.Module):
                def forward(self, x):
                    dist.all_reduce(x)
                    return x
            class Block(nn.Module):
                def __init__(self, width, p, drops):
                    super().__init__()
                    self.p, self.drops = p, drops
                    self.norm = Norm()
                def forward(self, x):
                    if torch.rand((), generator=self.drops) < self.p:
                        return x
                    return self.norm(x)
            def main():
                torch.manual_seed(1234 + rank)
                Block(4, 0.1, torch.Generator().manual_seed(7))(torch.ones(4))
            """),
        Valid("""
            from torch import nn
            class Norm(nn.Module):
                def forward(self, x):
                    dist.all_reduce(x)
                    return x
            class Block(nn.Module):
                def __init__(self, p):
                    super().__init__()
                    self.p = p
                    self.norm = Norm()
                def forward(self, x):
                    if torch.rand(()) < self.p:
                        return x
                    return self.norm(x)
            def main():
                torch.manual_seed(1234)
                Block(0.1)(torch.ones(4))
            """),
        # The module's state saved on every rank; an optimizer's state_dict has no such hook.
        Valid("""
            class Norm(torch.nn.Module):
                def _save_to_state_dict(self, destination, prefix, keep_vars):
                    stats = self.total.clone()
                    dist.all_reduce(stats)
                    destination[prefix + "total"] = stats
            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.norm = Norm()
            def save(path):
                net = Net()
                opt = torch.optim.SGD(net.parameters(), lr=0.1)
                state = net.state_dict()
                if rank == 0:
                    torch.save({"net": state, "opt": opt.state_dict()}, path)
            """),
        # The lazily computed statistic is first asked for on every rank alike.
        Valid("""
            class Scaler:
                def __init__(self):
                    self._stats = None
                def scale(self, x):
                    if self._stats is None:
                        total = x.sum(0)
                        dist.all_reduce(total)
                        self._stats = total
                    return x - self._stats
            def train(loader, first):
                scaler = Scaler()
                scaler.scale(first)
                for step in range(10):
                    first = scaler.scale(first)
            """),
        # The ranks agree on the failure before they read (they retry together), or read one path alike.
        Valid("""
            from tenacity import retry
            @retry
            def load_shard(root):
                path = root / f"shard-{dist.get_rank()}.txt"
                landed = torch.tensor([float(path.exists())])
                dist.all_reduce(landed, op=dist.ReduceOp.MIN)
                if landed.item() < 1:
                    raise FileNotFoundError(path)
                return path.read_text()
            @retry
            def load_index(root):
                dist.barrier()
                return (root / "index.json").read_text()
            """),
        # The suppressed lookup's key is the same on every rank, or the collective comes first.
        Valid("""
            from contextlib import suppress
            CONFIG = {"lr": 0.1}
            IDS = {"negative": 0, "positive": 1}
            def count(loader, t):
                for batch in loader:
                    with suppress(KeyError):
                        lr = CONFIG["lr"]
                        dist.all_reduce(t)
                    with suppress(KeyError):
                        dist.all_reduce(t)
                        ids = [IDS[label] for label in batch["labels"]]
            """),
        # A tracker's finish() runs on every process (end_training is not @on_main_process), and a
        # log() of a class that is no accelerate tracker is the program's own business.
        Valid("""
            from accelerate.tracking import GeneralTracker
            class MeanTracker(GeneralTracker):
                def finish(self):
                    dist.barrier()
            class Logger:
                def log(self, values):
                    dist.all_reduce(values)
            """),
        # Lightning calls `setup` on every rank; a rank's own batch has every rank's structure.
        Valid("""
            import lightning.pytorch as pl
            class Data(pl.LightningDataModule):
                def prepare_data(self):
                    download()
                def setup(self, stage):
                    dist.barrier()
            """),
        Valid("""
            def f(loader):
                for batch in loader:
                    if 'labels' not in batch or batch['mask'] is None:
                        continue
                    dist.all_reduce(batch['labels'])
            """),
        # The empty selection is padded with a placeholder and every rank gathers it.
        Valid("def stats(values, mask):\n    picked = values[mask]\n"
              "    low = picked.min() if picked.numel() > 0 else torch.zeros(())\n    return accelerator.gather(low)"),
        # A property that runs no collective, read on rank 0 only; and one that does, read everywhere.
        Valid("class Stats:\n    def __init__(self):\n        self.n = torch.zeros(1)\n    @property\n"
              "    def local(self):\n        return self.n.item()\n    @property\n    def total(self):\n"
              "        dist.all_reduce(self.n)\n        return self.n.item()\n"
              "def f():\n    stats = Stats()\n    total = stats.total\n    if rank == 0:\n        print(stats.local, total)"),
        # A helper's result from a rank's own data, agreed with an all_reduce before the test.
        Valid("def evaluate(model, loader):\n    total = 0.0\n    for x in loader:\n        total += model(x).item()\n"
              "    return total\ndef train(model, loader):\n    for epoch in range(10):\n"
              "        dist.all_reduce(model.weight)\n        val = torch.tensor([evaluate(model, loader)])\n"
              "        dist.all_reduce(val)\n        if val.item() > 3:\n            break"),
        # A helper whose work on the rank's data is caught inside it, before its collective; one
        # that raises only after its collective; and one that runs no collective, agreed on after.
        Valid("COST = {64: 1, 128: 2}\ndef vote(ok):\n    t = torch.tensor([int(ok)])\n    dist.all_reduce(t)\n"
              "    return bool(t.item())\ndef plan(lengths):\n    try:\n        fits = COST[max(lengths)] < 2\n"
              "    except KeyError:\n        fits = False\n    return vote(fits)\ndef f(loader):\n"
              "    rows = loader[dist.get_rank()]\n    try:\n        ok = plan(rows)\n    except KeyError:\n"
              "        ok = False"),
        Valid("def check(lengths):\n    dist.barrier()\n    if max(lengths) > 256:\n        raise ValueError(lengths)\n"
              "def f(loader):\n    rows = loader[dist.get_rank()]\n    try:\n        check(rows)\n    except ValueError:\n"
              "        pass"),
        Valid("def bucket(n):\n    if n > 256:\n        raise ValueError(n)\n    return 256\ndef f(loader):\n"
              "    rows = loader[dist.get_rank()]\n    try:\n        mine = bucket(max(rows))\n    except ValueError:\n"
              "        mine = 1\n    t = torch.tensor([mine])\n    dist.all_reduce(t, op=dist.ReduceOp.MIN)"),
        # A function handed a rank's own data that answers with what an all_reduce agreed on.
        Valid("def agree(n):\n    plan = torch.tensor([n])\n    dist.all_reduce(plan, op=dist.ReduceOp.MIN)\n"
              "    return int(plan.item())\ndef f(loader):\n    rows = next(iter(loader))\n    micro = agree(max(rows))\n"
              "    for start in range(0, 16, micro):\n        dist.all_reduce(rows[start])"),
        # Its keys are alike on every rank: a test of what it holds sets no ranks apart.
        Valid("def evaluate(model, loader):\n    return {'loss': sum(model(x).item() for x in loader)}\n"
              "def train(model, loader):\n    metrics = evaluate(model, loader)\n    if 'loss' not in metrics:\n"
              "        return\n    dist.barrier()"),
        # A check of a path no rank writes here: every rank finds the same file.
        Valid("def f(path):\n    if not os.path.exists(path):\n        print('missing', path)\n        dist.barrier()"),
        # Written after the check, with the barrier after the branch: every rank reaches it.
        Valid("def f(path, x):\n    if not os.path.exists(path):\n        torch.save(x, path)\n    dist.barrier()"),
        # Not initialised, one process: the test is true in every process of a job.
        Valid("def f():\n    if not dist.is_initialized():\n        return\n    dist.barrier()"),
        # A hook that runs a collective, registered on every rank.
        Valid("class Watch:\n    def attach(self, model):\n        for m in model.modules():\n"
              "            m.register_forward_hook(self._hook)\n    def _hook(self, module, inputs, output):\n"
              "        dist.all_reduce(output.detach())"),
        # A hook registered on rank 0 only that runs no collective.
        Valid("def record(module, inputs, output):\n    print(output.mean())\ndef attach(model):\n"
              "    if rank == 0:\n        model.register_forward_hook(record)"),
        # Callbacks of a class made on every rank; those added on some ranks only run no collective.
        Valid("class Printer:\n    def on_end(self, x):\n        print(x)\nclass Syncer:\n    def on_end(self, x):\n"
              "        dist.all_reduce(x)\ndef fit(callbacks, x):\n    for cb in callbacks:\n        cb.on_end(x)\n"
              "def main(x):\n    callbacks = [Syncer()]\n    if rank == 0:\n        callbacks.append(Printer())\n"
              "    fit(callbacks, x)"),
        # A generator's epilogue runs on every rank when every consumer runs it to the end.
        Valid("SHARDS = {0: [1, 2], 1: [3]}\ndef batches(items):\n    for x in items:\n        yield x\n"
              "    dist.barrier()\ndef f():\n    for b in batches(SHARDS[rank]):\n        print(b)"),
        # A loop over shares of different lengths that stops at the count every rank agreed on.
        Valid("SHARDS = {0: [1, 2], 1: [3]}\ndef f():\n    n = torch.tensor([len(SHARDS[rank])])\n"
              "    dist.all_reduce(n, op=dist.ReduceOp.MIN)\n    for i, b in enumerate(SHARDS[rank]):\n"
              "        if i == n.item():\n            break\n        dist.all_reduce(torch.tensor([b]))"),
        # A comprehension over what every rank holds alike runs its element as often everywhere.
        Valid("LANGS = ['en', 'de']\ndef f(x):\n    totals = {lang: x.clone() for lang in LANGS}\n"
              "    return {lang: dist.all_reduce(t) for lang, t in sorted(totals.items())}"),
        # The entry holds a tensor on every rank: a placeholder where the data has none.
        Valid("import lightning as L\ndef f(fabric: L.Fabric, batches, model):\n    for batch in batches:\n"
              "        out = {'pred': model(batch['x'])}\n"
              "        out['err'] = torch.zeros(1) if batch['ref'] is None else model(batch['ref'])\n"
              "        fabric.all_gather(out)"),
        # One collective per document of the rank's own, however long each one is; windows of a
        # document every rank holds.
        Valid("DOCS = [[1, 2, 3], [4, 5], [6, 7, 8, 9, 10], [1]]\ndef f(x):\n"
              "    mine = DOCS[rank * 2:(rank + 1) * 2]\n    for doc in mine:\n"
              "        dist.all_reduce(torch.tensor([float(len(doc))]))\n"
              "    for begin in range(0, len(DOCS[0]), 2):\n        dist.all_reduce(x)"),
        # A generator that yields on either arm of a test on the data yields once per item everywhere;
        # one that filters what every rank holds alike yields as many items everywhere.
        Valid("ROWS = [[1, 2], [3], [4, 5], [6]]\ndef scored(rows):\n    for row in rows:\n"
              "        if sum(row) > 3:\n            yield row, 1\n        else:\n            yield row, 0\n"
              "def f(x):\n    mine = ROWS[rank * 2:(rank + 1) * 2]\n    for row, label in scored(mine):\n"
              "        dist.all_reduce(x)"),
        Valid("ROWS = [[1, 2], [3], [4, 5], [6]]\ndef kept(rows):\n    for row in rows:\n"
              "        if sum(row) > 3:\n            yield row\n"
              "def f(x):\n    for row in kept(ROWS):\n        dist.all_reduce(x)"),
        # Entries of one length: every rank loops as often.
        Valid("TABLE = {0: [1, 2], 1: [3, 4]}\ndef f():\n    for x in TABLE[rank]:\n"
              "        dist.all_reduce(torch.tensor([x]))"),
        # A `finally` around the `yield` runs the collective whether the body raised or not.
        Valid("import contextlib\nRECORDS = {0: ['1'], 1: ['x']}\n@contextlib.contextmanager\ndef timed(stats):\n"
              "    try:\n        yield\n    finally:\n        dist.all_reduce(stats)\n"
              "def f(stats):\n    for record in RECORDS[rank]:\n        try:\n            with timed(stats):\n"
              "                float(record)\n        except ValueError:\n            pass"),
        # A body that works on what every rank holds alike fails everywhere or nowhere.
        Valid("import contextlib\n@contextlib.contextmanager\ndef timed(stats):\n    yield\n    dist.all_reduce(stats)\n"
              "def f(stats, config):\n    try:\n        with timed(stats):\n            float(config)\n"
              "    except ValueError:\n        pass"),
        # A failure only some ranks can meet, shared through an all_gather before anyone acts on it.
        Valid("def f(path, rows):\n    failed = False\n    try:\n        if rank == 0:\n"
              "            torch.save(rows, path)\n    except OSError:\n        failed = True\n"
              "    flag = torch.tensor(1 if failed else 0)\n    flags = [torch.zeros_like(flag) for _ in range(2)]\n"
              "    dist.all_gather(flags, flag)\n    for one in flags:\n        if one > 0:\n            failed = True\n"
              "    if failed:\n        raise RuntimeError('a rank failed to save')\n    dist.barrier()"),
        # A sampler of one's own that pads every rank's share to one length (as DistributedSampler does).
        Valid("import math\nfrom torch.utils.data import DataLoader, Sampler\nclass Padded(Sampler):\n"
              "    def __init__(self, n, world, rank):\n        self.n, self.world, self.rank = n, world, rank\n"
              "        self.per_rank = math.ceil(n / world)\n    def __len__(self):\n        return self.per_rank\n"
              "def evaluate(model, ds):\n"
              "    loader = DataLoader(ds, batch_size=2, sampler=Padded(len(ds), 2, dist.get_rank()))\n"
              "    for (x,) in loader:\n        dist.all_reduce(model(x).sum())"),
        # A memoised collective keyed alike on every rank runs once, on every rank's first call.
        Valid("import functools\n@functools.cache\ndef longest(split):\n    t = torch.tensor([len(split)])\n"
              "    dist.all_reduce(t)\n    return int(t.item())\ndef f(docs):\n"
              "    for batch in docs[rank::2]:\n        longest('train')"),
        # What a class's methods leave in its attributes, alike on every rank (analysis.attributes).
        Valid("class RunDir:\n    def __init__(self, path):\n        os.makedirs(path, exist_ok=True)\n"
              "        self.created = True\n    def prepare(self):\n        if self.created:\n            dist.barrier()"),
        Valid("class State:\n    def __init__(self, root):\n        self.path = os.path.join(root, 'state.json')\n"
              "    def load(self):\n        if not os.path.exists(self.path):\n            return 0\n"
              "        return 1\ndef run(root):\n    state = State(root)\n    for step in range(state.load(), 4):\n"
              "        dist.barrier()"),
        # Launched at all (a rank every process has), and the arm a job of one process takes.
        Valid("def f(x):\n    if int(os.environ.get('LOCAL_RANK', -1)) != -1:\n        mode = 'ddp'\n"
              "    else:\n        mode = 'single'\n    if mode == 'ddp':\n        dist.barrier()"),
        Valid("class Epoch:\n    def compute(self, preds):\n        if self.result is None:\n"
              "            ws = dist.get_world_size()\n            if ws > 1:\n                dist.all_gather([preds], preds)\n"
              "            self.result = 0.0\n            if dist.get_rank() == 0:\n                self.result = float(preds.sum())\n"
              "            if ws > 1:\n                self.result = broadcast(torch.tensor(self.result)).item()\n"
              "        return self.result"),
        Valid("from accelerate.utils import gather_object\nclass Est:\n    def estimate(self, loader):\n"
              "        local = {}\n        for batch in loader:\n            local[batch[0]] = batch[1]\n"
              "        self.values = dict(gather_object(list(local.items())))\n    def step(self, loader):\n"
              "        if self.values is None:\n            self.estimate(loader)\n        dist.barrier()"),
        # A helper whose collective runs only for some arguments, and one over the caller's group.
        Valid("def fetch(path, store=None):\n    if store is None:\n        broadcast_object_list([path])\n"
              "    return store\nif accelerator.is_main_process:\n    fetch('ckpt', object())"),
        Valid("def group_sum(x, group):\n    dist.all_reduce(x, group=group)\n"
              "def f(x, group):\n    if dist.get_rank(group) == 0:\n        group_sum(x, group)"),
        Valid("if accelerator.is_main_process:\n    x = torch.randn(3)\n    dist.broadcast(x, 0)\n"
              "else:\n    x = torch.zeros(3)\n    dist.broadcast(x, 0)"),
        Valid("x = torch.zeros(3)\nif accelerator.num_processes > 1:\n    dist.broadcast(x, 0)"),
        Valid("if accelerator.is_main_process:\n    save()\naccelerator.wait_for_everyone()"),
        Valid("with accelerator.main_process_first():\n    data = load()\nx = torch.zeros(3)\n"
              "dist.broadcast(x, 0)"),
        Valid("out = torch.zeros(2, 2)\nif rank == 0:\n    out = out.gather(1, torch.zeros(2, 1).long())"),
        Valid("def f(x):\n    if rank == 0:\n        dist.all_reduce(x)\n    elif rank == 1:\n"
              "        dist.all_reduce(x)\n    else:\n        dist.all_reduce(x)"),
        Valid("def search(n):\n    if rank == 0:\n        def objective(t):\n            broadcast_object_list([t])\n"
              "        optimize(objective)\n    else:\n        broadcast_object_list([None])"),
        # A decorator of the module that calls what it wraps on every rank (a rank test around
        # its logging only).
        Valid("def timed(fn):\n    def wrapper(*args):\n        if dist.get_rank() == 0:\n            print('start')\n"
              "        return fn(*args)\n    return wrapper\n@timed\ndef log(x):\n    dist.all_reduce(x)"),
        Valid("@accelerator.on_main_process\ndef save(path):\n    torch.save({}, path)\n"
              "x = torch.zeros(3)\nbroadcast(x)"),
        # A collective over another group than the one whose rank is tested: the tensor-parallel
        # rank-0 processes form whole data-parallel groups.
        Valid("def f(x):\n    if mpu.get_tensor_model_parallel_rank() == 0:\n"
              "        dist.all_reduce(x, group=mpu.get_data_parallel_group())"),
        Valid("def f(x, tp_group, dp_group):\n    if dist.get_rank(tp_group) == 0:\n"
              "        dist.all_reduce(x, group=dp_group)"),
        # The same, with `group` passed by position.
        Valid("def f(x, tp_group, dp_group):\n    if dist.get_rank(tp_group) == 0:\n"
              "        dist.all_reduce(x, dist.ReduceOp.SUM, dp_group)"),
        Valid("def f(tp_group, dp_group):\n    if dist.get_rank(tp_group) == 0:\n        dist.barrier(dp_group)"),
        # Exits every rank may take, and trip counts that do not depend on the rank.
        Valid("for batch in loader:\n    loss = accelerator.reduce(step(batch))\n    if loss.item() < 0.1:\n"
              "        break"),
        Valid("for shard in shards[:n]:\n    dist.all_reduce(shard)"),
        Valid("for i in range(world_size):\n    dist.broadcast(x, src=i)"),
        Valid("def f(x):\n    dist.all_reduce(x)\n    if rank == 0:\n        return x\n    return None"),
        Valid("def f(x):\n    if rank == 0 and x is None:\n        raise ValueError('no data')\n    dist.barrier()"),
        Valid("while True:\n    flag = torch.zeros(1)\n    if rank == 0:\n        flag.fill_(1.0)\n"
              "        dist.broadcast(flag, 0)\n        break\n    else:\n        dist.broadcast(flag, 0)\n"
              "        if flag.item():\n            break"),
        # An exit in another arm of the `if` that holds the call (accelerate's load_fsdp_model).
        Valid("def f(x, full):\n    if full:\n        if rank != 0:\n            return\n        load(x)\n"
              "    else:\n        dist.all_reduce(x)"),
        # A global test in front of a subgroup's collective may select exactly its members.
        Valid("def f(x, pg):\n    if rank in (0, 1):\n        dist.all_reduce(x, group=pg)"),
        Valid("def f(x, g):\n    if g.rank() == 0:\n        x = torch.ones(3)\n        dist.broadcast(x, 0, group=g)\n"
              "    else:\n        dist.broadcast(x, 0, group=g)"),
        # Values that differ between ranks, made equal by a collective before the test.
        Valid("import time\ndef f(batches, limit):\n    start = time.time()\n    for batch in batches:\n"
              "        stop = torch.tensor([float(time.time() - start > limit)])\n        dist.all_reduce(stop)\n"
              "        if stop.item() > 0:\n            break\n        dist.all_reduce(batch)"),
        Valid("def f(x):\n    n = torch.tensor([float(len(x[rank::2]))])\n    n = broadcast(n)\n"
              "    if n.item() > 0:\n        dist.barrier()"),
        # A zero-first context manager whose body runs no collective.
        Valid("import contextlib\n@contextlib.contextmanager\ndef zero_first():\n    if rank != 0:\n"
              "        dist.barrier()\n    yield\n    if rank == 0:\n        dist.barrier()\n"
              "def f():\n    with zero_first():\n        data = load()\n    dist.all_reduce(data)"),
        # A long helper is followed like a short one: it gathers on every rank that calls it.
        Valid("def evaluate(model, loader):\n" + "".join(f"    step_{i} = {i}\n" for i in range(70))
              + "    return accelerator.gather_for_metrics(model(loader))\ndef f(model, loader):\n"
              "    print(evaluate(model, loader))"),
        # A helper that returns early on an empty argument, given the same on every rank.
        Valid("def gather_metrics(local):\n    if not local:\n        return {}\n    out = [None] * 2\n"
              "    dist.all_gather_object(out, local)\n    return out\n"
              "def f(layers):\n    if rank == 0:\n        print(layers)\n    return gather_metrics({n: 1 for n in layers})"),
        # One item per rank: its values differ, its length need not.
        Valid("LOSSES = {0: [0.9, 0.7], 1: [0.8, 0.6]}\ndef f():\n    for loss in LOSSES[rank]:\n"
              "        dist.all_reduce(torch.tensor([loss]))"),
        # Setup checks, the same on every rank of a distributed job.
        Valid("def f(x):\n    if not dist.is_initialized() or dist.get_rank() == 0:\n        print(x)\n"
              "    if dist.get_world_size() > 1 or dist.get_rank() == 0:\n        dist.all_reduce(x)"),
        # The zero-first idiom through a name: the two barriers pair up on every rank.
        Valid("def zero_first(local):\n    is_main = accelerator.is_local_main_process if local else "
              "accelerator.is_main_process\n    if not is_main:\n        dist.barrier()\n    yield\n"
              "    if is_main:\n        dist.barrier()"),
        # A loop variable named like the rank, a membership test over every group, an error path.
        Valid("def f(groups, x):\n    for global_rank in groups:\n        if global_rank in seen:\n"
              "            continue\n        dist.new_group([global_rank])"),
        Valid("def f(world, size):\n    table = {}\n    for i in range(world // size):\n"
              "        ranks = range(i * size, (i + 1) * size)\n        group = dist.new_group(ranks)\n"
              "        if rank in ranks:\n            table['ep'] = group\n"
              "    if 'ep' not in table:\n        return\n    dist.barrier()"),
        Valid("def f(tp):\n    if local_rank >= tp:\n        raise RuntimeError('too few')\n"
              "    dist.new_group(list(range(tp)))"),
        # Set on every rank, one way on the source and another elsewhere: same length everywhere.
        Valid("def f(model):\n    if dist.get_rank() == 0:\n        model = model.to('cpu')\n    else:\n"
              "        model = model.to_empty(device='cpu')\n    for name, buf in sorted(model.named_buffers()):\n"
              "        dist.broadcast(buf, src=0)"),
        # A distributed sampler gives every rank a share of one length.
        Valid("from torch.utils.data import DataLoader, DistributedSampler\ndef f(ds):\n"
              "    loader = DataLoader(ds, sampler=DistributedSampler(ds, rank=rank))\n    for batch in loader:\n"
              "        dist.all_reduce(batch)"),
        # Failing exits every rank takes alike: a raise on a uniform argument, an assertion on a
        # reduced value, a raise caught by its own `try`, a comprehension target named `rank`.
        Valid("def f(x):\n    if x is None:\n        raise ValueError('no data')\n    dist.barrier()"),
        Valid("def f(loss):\n    dist.all_reduce(loss)\n    assert torch.isfinite(loss).all()\n    dist.barrier()"),
        Valid("def fail(msg):\n    print(msg)\n    sys.exit(1)\ndef f(cfg):\n    if cfg is None:\n"
              "        fail('no configuration')\n    dist.barrier()"),
        Valid("def f(path):\n    mine = f'{path}.{rank}'\n    try:\n        if os.path.exists(mine):\n"
              "            raise FileExistsError(mine)\n    except FileExistsError:\n        os.remove(mine)\n"
              "    dist.barrier()"),
        Valid("def f(place):\n    everyone = [None] * 2\n    dist.all_gather_object(everyone, place)\n"
              "    assert [rank for rank, main in everyone if main] == [0]\n    dist.barrier()"),
        # An invariant of the split: each rank checks its share against what it computes for its rank.
        Valid("def expected(n, rank, world):\n    return n // world + (1 if rank < n % world else 0)\n"
              "def f(received, n, world):\n    mine = torch.tensor(received[0])\n"
              "    assert len(mine) == expected(n, rank, world)\n    dist.all_reduce(mine)"),
        # Sets iterated in one order: sorted, or of plain integers.
        Valid("def f(params):\n    for name in sorted(set(params)):\n        dist.all_reduce(params[name])"),
        Valid("def f(xs):\n    for i in {0, 1, 2}:\n        dist.all_reduce(xs[i])\n"
              "    for j in set(range(3)):\n        dist.all_reduce(xs[j])"),
        # A file every rank reads alike (no rank writes it here) and a configuration flag.
        Valid("def f(path, args):\n    if os.path.exists(path):\n        dist.barrier()\n"
              "    if args.sync:\n        dist.barrier()"),
        # A rank's own batch (analysis.divergence DATA): tests on it are fine once the value is
        # reduced, when they guard no collective, and on the step count, which every rank shares.
        Valid("def f(model, loader):\n    for x in loader:\n        loss = model(x)\n        dist.all_reduce(loss)\n"
              "        if torch.isnan(loss):\n            continue\n        dist.barrier()"),
        Valid("def f(model, loader):\n    for x in loader:\n        loss = model(x)\n        if torch.isnan(loss):\n"
              "            print('nan')\n        dist.all_reduce(loss)"),
        Valid("def f(model, train_loader, accumulate):\n    for step, batch in enumerate(train_loader):\n"
              "        loss = model(batch)\n        if (step + 1) % accumulate == 0:\n            dist.all_reduce(loss)"),
        Valid("def f(model, loader, best):\n    for epoch in range(3):\n        for x in loader:\n            val = model(x).item()\n"
              "        stop = torch.tensor(float(val > best))\n        dist.all_reduce(stop)\n        if stop.item():\n"
              "            break\n        dist.barrier()"),
        Valid("def f(model, items):\n    for x in items:\n        loss = model(x)\n        if loss.item() > 1:\n"
              "            dist.barrier()"),  # not known to be a rank's share of the data
        # A property that returns a test of something else than the rank.
        Valid("class T:\n    @property\n    def ready(self):\n        return self.steps > 10\n"
              "    def f(self, x):\n        if self.ready:\n            dist.all_reduce(x)"),
        Valid("def f(cfg, x):\n    if cfg.ready:\n        dist.all_reduce(x)\ndef main(cfg, x, step):\n"
              "    cfg.ready = step > 10\n    f(cfg, x)"),
        Valid("def f(x, step):\n    def due():\n        return step % 10 == 0\n    if due():\n        dist.all_reduce(x)"),
        # A method of an object of the module's class that runs no collective, or that every rank calls.
        Valid("class Meter:\n    def show(self, x):\n        print(x)\n    def sync(self, x):\n        dist.all_reduce(x)\n"
              "def f(x):\n    meter = Meter()\n    if rank == 0:\n        meter.show(x)\n    meter.sync(x)"),
        # Arithmetic on the world size that every rank passes.
        Valid("def f(x):\n    if dist.get_rank() < dist.get_world_size():\n        dist.all_reduce(x)"),
        # Work on a rank's own batch that may fail there, whose handler still reaches the collective.
        Valid("def f(model, loader):\n    for batch in loader:\n        try:\n            loss = model(batch)\n"
              "        except ValueError:\n            loss = torch.zeros(1)\n        dist.all_reduce(loss)"),
        # Entering a project class's `main_process_first()` on an object made inline is the block's
        # own barrier, not a call inside it (accelerate's `Accelerator.main_process_first`).
        Valid("import contextlib\nclass State:\n    @contextlib.contextmanager\n    def main_process_first(self):\n"
              "        if rank != 0:\n            dist.barrier()\n        yield\n        if rank == 0:\n"
              "            dist.barrier()\n@contextlib.contextmanager\ndef first():\n"
              "    with State().main_process_first():\n        yield"),
        # A fallback handler every rank takes alike (a capability missing everywhere), not a crash.
        Valid("def make_groups(size):\n    try:\n        mesh = dist.init_device_mesh('cpu', (size,))\n"
              "    except RuntimeError:\n        return dist.new_group(list(range(size)))\n    return mesh.get_group()"),
        # A helper returning a tuple whose varying item the callers broadcast (accelerate's _fetch_batches).
        Valid("def fetch(it):\n    batch = None\n    info = [None, True]\n    if dist.get_rank() == 0:\n"
              "        batch = next(it)\n        info = [batch.shape, False]\n    dist.broadcast_object_list(info)\n"
              "    return batch, info\n"
              "def f(it):\n    stop = False\n    while not stop:\n        batch, info = fetch(it)\n        stop = info[1]\n"
              "        dist.barrier()"),
        # A rank's own batch handed to a helper: its keys are alike on every rank.
        Valid("def step(inputs):\n    labels = inputs.get('labels')\n    if labels is not None:\n"
              "        labels = accelerator.pad_across_processes(labels)\n    return labels\n"
              "def f(loader):\n    for batch in loader:\n        step(batch)"),
        # A rank test handed as an argument, with the collective in both arms' path.
        # The value set apart on the other ranks is made the same everywhere before the test.
        Valid("def f(model, x, best):\n    for epoch in range(6):\n        dist.all_reduce(x)\n"
              "        if dist.get_rank() == 0:\n            val_loss = torch.tensor(model.evaluate())\n        else:\n"
              "            val_loss = torch.tensor(0.0)\n        dist.broadcast(val_loss, 0)\n        if val_loss > best:\n"
              "            break"),
        # Both arms compute: values of one kind (a model placed on each rank's device).
        Valid("def f(model, x, best):\n    for epoch in range(6):\n        dist.all_reduce(x)\n"
              "        if dist.get_rank() == 0:\n            model = model.to('cpu')\n        else:\n"
              "            model = model.to_empty(device='cpu')\n        if model.training:\n            break"),
        # Each rank's piece of the split, padded to the same length before the loop.
        Valid("def f(all_ids, feats, chunk):\n    ids = torch.split(all_ids, chunk)[rank]\n"
              "    if len(ids) < chunk:\n        ids = torch.cat([ids, ids[: chunk - len(ids)]])\n"
              "    for start in range(0, len(ids), 2):\n        dist.all_reduce(feats[ids[start:start + 2]])"),
        # A string's words are not a split of the data.
        Valid("def f(spec, x):\n    name = spec.split(',')[rank]\n    for _ in range(len(name)):\n"
              "        dist.all_reduce(x)"),
        # The writer exists on the main process only, but the reduction runs before the test.
        Valid("class Trainer:\n    def __init__(self, metric):\n        self.metric = metric\n"
              "        self.writer = Writer() if dist.get_rank() == 0 else None\n    def on_epoch_end(self, x):\n"
              "        dist.all_reduce(x)\n        if self.writer is None:\n            return\n"
              "        self.writer.add_scalar('loss', x)"),
        # Every share kept whole: their lengths differ by one at most, where the world size does not
        # divide them, which is not known here.
        Valid("def batches(samples, size):\n    for start in range(0, len(samples), size):\n"
              "        yield samples[start:start + size]\ndef f(records):\n"
              "    with accelerator.split_between_processes(records, apply_padding=True) as shard:\n"
              "        kept = list(shard)\n    for batch in batches(kept, 2):\n        accelerator.gather_for_metrics(batch)"),
        # The policy is the same on every rank: a step count, no rank.
        Valid("class Policy:\n    def __init__(self, every):\n        self.every = every\n"
              "    def due(self, step):\n        return step % self.every == 0\n"
              "def save(model):\n    accelerator.wait_for_everyone()\n    accelerator.save(model.state_dict(), 'm.pt')\n"
              "def f(model):\n    policy = Policy(2)\n    for step in range(4):\n        if policy.due(step):\n"
              "            save(model)"),
        # The decorator re-raises: a failing rank stops, it does not skip on.
        Valid("def log_errors(step):\n    def wrapper(*args):\n        try:\n            return step(*args)\n"
              "        except RuntimeError:\n            log.exception('step failed')\n            raise\n    return wrapper\n"
              "@log_errors\ndef forward_backward(model, batch):\n    loss = model(batch)\n    loss.backward()\n"
              "    return loss\ndef f(model, loader, x):\n    for batch in loader:\n"
              "        loss = forward_backward(model, batch)\n        if loss is None:\n            continue\n"
              "        dist.all_reduce(x)"),
        # A distributed sampler hands every rank as many batches: they run out together.
        Valid("def f(dataset, model):\n    loader = DataLoader(dataset, sampler=DistributedSampler(dataset))\n"
              "    it = iter(loader)\n    while True:\n        batch = next(it, None)\n        if batch is None:\n"
              "            break\n        dist.all_reduce(model(batch))"),
        # A function of one's own that happens to share the name, returning no rank test.
        Valid("def is_main_process():\n    return True\ndef f(x):\n    if is_main_process():\n        dist.all_reduce(x)"),
        # A class-based rank-zero-first block: its own barriers meet, its body is local work.
        Valid("class ZeroFirst:\n    def __enter__(self):\n        if rank != 0:\n            dist.barrier()\n"
              "        return self\n    def __exit__(self, *exc):\n        if rank == 0:\n            dist.barrier()\n"
              "def f(lines, x):\n    with ZeroFirst():\n        lines = [line.strip() for line in lines]\n"
              "    dist.all_reduce(x)"),
        Valid("def send(x, is_main):\n    if is_main:\n        y = x\n    else:\n        y = torch.zeros_like(x)\n"
              "    dist.broadcast(y, 0)\n"
              "def f(x):\n    send(x, dist.get_rank() == 0)"),
        # A function of one's own named like a sharding call: its summary says what it returns (two
        # items on every rank), not its name.
        # A flag the method sets on every rank after its collective: every rank returns early alike
        # on its next call.
        Valid("""
            class Saver:
                def __init__(self):
                    self.saved = False
                def save(self, state):
                    if self.saved:
                        return
                    dist.barrier()
                    if dist.get_rank() == 0:
                        torch.save(state, 'ckpt')
                    self.saved = True
            """),
        # The exit's barrier runs whatever the body raised, or the handler raises again: every rank
        # meets it.
        Valid("""
            import json
            class Stage:
                def __init__(self, accelerator):
                    self.accelerator = accelerator
                def __enter__(self):
                    return self
                def __exit__(self, exc_type, exc, tb):
                    if exc_type is not None:
                        print('stage failed')
                    self.accelerator.wait_for_everyone()
            class Checked(Stage):
                def __exit__(self, exc_type, exc, tb):
                    if exc_type is None:
                        self.accelerator.wait_for_everyone()
            def export(accelerator, shards):
                for shard in shards[accelerator.process_index::accelerator.num_processes]:
                    try:
                        with Stage(accelerator):
                            values = [json.loads(line) for line in shard]
                    except ValueError:
                        continue
                    try:
                        with Checked(accelerator):
                            values = [json.loads(line) for line in shard]
                    except ValueError:
                        raise
            """),
        # A progress bar disabled off the main process, iterated or shown, and a step count of one's
        # own: every rank evaluates at the same steps.
        Valid("""
            from tqdm.auto import tqdm
            def train(accelerator, loader, evaluate):
                bar = tqdm(range(len(loader)), disable=not accelerator.is_main_process)
                step = 0
                for batch in tqdm(loader, disable=not accelerator.is_main_process):
                    bar.update(1)
                    step += 1
                    if step % 100 == 0:
                        accelerator.gather(evaluate())
            """),
        # A helper's or property's path the same on every rank: every rank sees the same file.
        Valid("""
            import os
            def ckpt_path(root):
                return os.path.join(root, "last.pt")
            class Manager:
                def __init__(self, root):
                    self.root = root
                @property
                def state_path(self):
                    return f"{self.root}/state.pt"
                def load(self):
                    if not os.path.exists(self.state_path) or not os.path.exists(ckpt_path(self.root)):
                        return None
                    dist.barrier()
            """),
        # A meter formatted on every rank (an f-string), or logged lazily where every rank prints.
        Valid("""
            import logging
            logger = logging.getLogger("train")
            class Peak:
                def __str__(self):
                    dist.all_reduce(self.value)
                    return str(self.value)
            def train(rank, steps):
                logger.setLevel(logging.INFO if rank == 0 else logging.WARNING)
                peak = Peak()
                for step in range(steps):
                    logger.info(f"step {step} peak {peak}")
            """),
        Valid("""
            import logging
            logger = logging.getLogger("train")
            class Peak:
                def __str__(self):
                    dist.all_reduce(self.value)
                    return str(self.value)
            def evaluate(steps):
                logging.basicConfig(level=logging.INFO)
                peak = Peak()
                logger.info("peak %s", peak)
            """),
        # A logging level set alike on every rank: whether INFO prints is the same everywhere.
        Valid("""
            import logging
            log = logging.getLogger("train")
            def setup(verbose):
                logging.basicConfig(level=logging.INFO if verbose else logging.WARNING)
            def report(x):
                if log.isEnabledFor(logging.INFO):
                    dist.all_reduce(x)
                    log.info("sum %s", x)
            """),
        Valid("def shard(rank, world):\n    return [rank, world]\n"
              "def f():\n    for item in shard(dist.get_rank(), dist.get_world_size()):\n        dist.barrier()"),
        # An environment variable set on every rank, or by a rank test in a function nothing calls.
        Valid("os.environ['WANDB_MODE'] = cfg.mode\nif os.environ.get('WANDB_MODE') != 'disabled':\n"
              "    accelerator.wait_for_everyone()"),
        Valid("def quiet():\n    if not accelerator.is_main_process:\n        os.environ['WANDB_MODE'] = 'disabled'\n"
              "if os.environ.get('WANDB_MODE') != 'disabled':\n    accelerator.wait_for_everyone()"),
        # Both arms in one order (the source sends, the others receive), or arms apart by a setting.
        Valid("def f(token, done):\n    if rank == 0:\n        dist.broadcast(token, 0)\n        dist.all_reduce(done)\n"
              "    else:\n        dist.broadcast(token, 0)\n        dist.all_reduce(done)"),
        Valid("def f(token, done, cfg):\n    if cfg.reduce_first:\n        dist.all_reduce(done)\n"
              "        dist.broadcast(token, 0)\n    else:\n        dist.broadcast(token, 0)\n"
              "        dist.all_reduce(done)"),
        # A module-level path every rank names alike.
        Valid("SCRATCH = '/tmp/job'\ndef step(x):\n    if os.path.exists(SCRATCH + '/STOP'):\n        return\n"
              "    dist.all_reduce(x)"),
        # A literal table of an even number of items dealt by rank: taken as written for the job.
        Valid("ROWS = ['a', 'b', 'c', 'd']\ndef f():\n    for row in ROWS[rank::dist.get_world_size()]:\n"
              "        dist.barrier()"),
        Valid("ROWS = ['a', 'b', 'c', 'd']\ndef f():\n    for i in range(rank, len(ROWS), dist.get_world_size()):\n"
              "        dist.barrier()"),
        # A dispatch by name to a hook whose only class runs no collective.
        Valid("class Quiet:\n    def on_log(self, trainer, step):\n        print(step)\n"
              "class Trainer:\n    def __init__(self, callbacks):\n        self.callbacks = callbacks\n"
              "    def fire(self, hook, **kwargs):\n        for cb in self.callbacks:\n"
              "            getattr(cb, hook)(self, **kwargs)\n    def fit(self):\n        if rank == 0:\n"
              "            self.fire('on_log', step=1)\ndef main():\n    Trainer([Quiet()]).fit()"),
        # Helpers over groups of their own in swapped order, under a test the ranks agreed on first.
        Valid("GROUPS = {}\ndef sync_stats(x):\n    dist.all_reduce(x, group=GROUPS['stats'])\n"
              "def sync_grads(y):\n    dist.all_reduce(y, group=GROUPS['grads'])\n"
              "def f(x, y, lengths):\n    longest = torch.tensor([lengths[rank]])\n"
              "    dist.all_reduce(longest, op=dist.ReduceOp.MAX, group=GROUPS['grads'])\n"
              "    if longest.item() > 4:\n        sync_stats(x)\n        sync_grads(y)\n    else:\n"
              "        sync_grads(y)\n        sync_stats(x)"),
        # A container filled on every rank alike: its truth is the same everywhere.
        Valid("def f():\n    kept = []\n    for i in range(3):\n        kept.append(i)\n    if not kept:\n        return\n"
              "    dist.all_reduce(torch.tensor(kept))"),
        # Objects that always pickle, or a handler that re-raises.
        Valid("def score(r):\n    return {'id': r, 'key': sorted([r], key=lambda v: -v)}\n"
              "def f(shard):\n    rows = [score(r) for r in shard[rank::2]]\n    try:\n"
              "        out = [None, None]\n        dist.all_gather_object(out, rows)\n    except Exception:\n"
              "        out = [rows]"),
        Valid("def score(r):\n    out = {'id': r}\n    if r < 0:\n        out['fix'] = lambda t: t\n    return out\n"
              "def f(shard):\n    rows = [score(r) for r in shard[rank::2]]\n    try:\n"
              "        out = [None, None]\n        dist.all_gather_object(out, rows)\n    except Exception:\n"
              "        print('failed')\n        raise"),
        # A `finally` after collectives on what every rank holds alike.
        Valid("def f(seen):\n    try:\n        for step in range(3):\n            dist.all_reduce(torch.ones(1) * step)\n"
              "    finally:\n        dist.all_reduce(seen)"),
        # The same warm-up counted in calls, or in rows all-reduced first: the same on every rank.
        Valid("""
            import torch
            from accelerate import Accelerator
            class Norm:
                def __init__(self, accelerator):
                    self.accelerator, self.calls, self.seen = accelerator, 0, 0
                    self.frozen = self.counted = False
                def observe(self, obs):
                    self.accelerator.reduce(obs.sum(0))
                    self.calls += 1
                    self.frozen = self.calls >= 8
                def count(self, obs):
                    rows = self.accelerator.reduce(torch.tensor(len(obs)), reduction="sum")
                    self.seen += int(rows)
                    self.counted = self.seen >= 8
            def main(accelerator: Accelerator):
                norm = Norm(accelerator)
                for step in range(5):
                    obs = torch.randn(4 if accelerator.is_main_process else 2, 3)
                    norm.count(obs)
                    if not norm.frozen:
                        norm.observe(obs)
                    if not norm.counted:
                        norm.observe(obs)
            """),
        # A range to an even literal, dealt by rank.
        Valid("def f(x):\n    for i in range(dist.get_rank(), 16, dist.get_world_size()):\n        dist.all_reduce(x[i])"),
        # Validation and test loaders get a padded DistributedSampler: as many batches on every rank.
        Valid("import lightning as L\nclass M(L.LightningModule):\n    def validation_step(self, batch, batch_idx):\n"
              "        return self.all_gather(self.net(batch))"),
        # A dataset made from an even literal table, dealt by rank.
        Valid("LABELS = [0, 1, 0, 1]\ndef f():\n    ds = TensorDataset(torch.randn(len(LABELS), 4), torch.tensor(LABELS))\n"
              "    for i in range(rank, len(ds), dist.get_world_size()):\n        dist.all_reduce(ds[i][0])"),
        # A helper dealing an even literal table by rank: every rank gets as many items (the table is
        # read into the helper's summary).
        Valid("""
            import torch.distributed as dist
            FILES = ["a", "b", "c", "d", "e", "f"]
            def make_batches(rank, world):
                batches = []
                for name in FILES[rank::world]:
                    batches.append(load(name))
                return batches
            def main():
                rank, world = dist.get_rank(), dist.get_world_size()
                for batch in make_batches(rank, world):
                    dist.all_reduce(batch)
            """),
        # Python's generator seeded alike on every rank, or a library's draw (whoever runs it seeds it).
        Valid("""
            import random
            def step(usage):
                if random.random() > 0.5:
                    dist.all_reduce(usage)
            if __name__ == "__main__":
                random.seed(0)
                step(torch.ones(1))
            """),
        Valid("""
            import random
            def step(usage):
                if random.random() > 0.5:
                    dist.all_reduce(usage)
            """),
        # A rank's share of a list, repeated and cut to one count: as many steps on every rank.
        Valid("""
            import torch.distributed as dist
            def train(shards, model):
                rank, world = dist.get_rank(), dist.get_world_size()
                mine = shards[rank::world]
                per_rank = -(-len(shards) // world)
                mine = (mine * per_rank)[:per_rank]
                for shard in mine:
                    dist.all_reduce(model(shard))
            """),
        # The same preview restoring the mode, or a loop that sets training mode at every step.
        Valid("""
            import torch.distributed as dist
            from torch import nn
            class CrossNorm(nn.Module):
                def forward(self, x):
                    if self.training:
                        dist.all_reduce(x)
                    return x
            def preview(model, x):
                was_training = model.training
                model.eval()
                print(model(x))
                model.train(was_training)
            def train(model, loader, rank):
                for step, x in enumerate(loader):
                    model.train()
                    model(x).sum().backward()
                    if rank == 0 and step == 2:
                        preview(model, x)
                        model.eval()
            """),
        # The default even batches: every rank's prepared loader has as many batches.
        Valid("""
            from accelerate import Accelerator
            from torch.utils.data import DataLoader
            def evaluate(model, data):
                accelerator = Accelerator()
                model, loader = accelerator.prepare(model, DataLoader(data, batch_size=2))
                for x, y in loader:
                    print(accelerator.reduce(model(x).mean()))
            """),
        # A function that makes one item per entry of an even literal table, dealt by rank: as many
        # items on every rank, as the table itself would be.
        Valid("""
            import torch
            import torch.distributed as dist
            LENGTHS = [5, 10, 6, 10, 4, 3, 5, 4]
            def sequences():
                return [torch.ones(n) for n in LENGTHS]
            def main():
                mine = sequences()[dist.get_rank()::dist.get_world_size()]
                for row in mine:
                    dist.all_reduce(row.sum())
            """),
    )
    INVALID = (
        # Only the global main process fetches into its node's directory; the barrier after it
        # does not put the file on the other nodes' disks.
        Invalid(_NODE_LOCAL_FETCH,
                expected_message="all_reduce() runs only on ranks where 'os.path.exists(path)' is true (it "
                "checks a file that only some ranks write (line 16): a rank on another node, or whose file system "
                "does not show the new file yet, finds something else): the other ranks never join it and every "
                "rank hangs until the timeout (those ranks run barrier (line 17) then all_reduce (line 19), while "
                "the others run barrier (line 17) only)",
                range=(11, 9, 11, 39)),
        # A dict filled past an early return on a test of the rank's own state: which keys it
        # holds differs, and so does the `or` that decides whether the all-reduce runs (sglang#38273).
        Invalid("class Cache:\n    def __init__(self, rank):\n        self.free = 1000 // (rank + 1)\n"
                "        self.ongoing = {}\n    def admit(self, rid, pages):\n        if pages > self.free:\n"
                "            return False\n        self.ongoing[rid] = pages\n        return True\n"
                "    def finished(self, rid):\n        flags = torch.tensor([1.0])\n        dist.all_reduce(flags)\n"
                "        return flags.item() == 0.0\n    def check(self, rid):\n"
                "        return rid not in self.ongoing or self.finished(rid)\n",
                expected_message="finished() is skipped on ranks where 'rid not in self.ongoing' is true: 'or' does not "
                "evaluate "
                "it there, and 'rid not in self.ongoing' can differ between ranks (it is set under a condition "
                "that differs between ranks), so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout",
                range=(15, 43, 15, 61)),
        # Pieces of 8 rows of a tensor made with the rank's own number of rows.
        Invalid("ROWS = {0: 40, 1: 24}\ndef f(rank):\n    x = torch.randn(ROWS[rank], 4)\n"
                "    for piece in x.split(8):\n        dist.all_reduce(piece.sum())\n",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop at line 12 "
                "iterates "
                "over 'x.split(8)', whose length can differ between ranks (it holds the data of the rank it was "
                "given), so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(5, 9, 5, 37)),
        # DDP's join shadows the wrapper's own collectives for ranks out of batches, not the
        # loop's all-reduce.
        Invalid("from torch.nn.parallel import DistributedDataParallel as DDP\nROWS = {0: 40, 1: 24}\n"
                "def f(rank):\n    x = torch.randn(ROWS[rank], 4)\n    model = DDP(torch.nn.Linear(4, 1))\n"
                "    with model.join():\n        for piece in x.split(8):\n"
                "            model(piece).sum().backward()\n            dist.all_reduce(torch.ones(1))\n",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop at line 15 "
                "iterates "
                "over 'x.split(8)', whose length can differ between ranks (it holds the data of the rank it was "
                "given), so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(9, 13, 9, 43)),
        # An odd table split between the processes without padding (SimpleTuner#1391).
        Invalid("import math\nIMAGES = [f'img{i}' for i in range(9)]\ndef f():\n"
                "    with accelerator.split_between_processes(IMAGES) as mine:\n        local = list(mine)\n"
                "    steps = math.ceil(len(local) / 2)\n    for step in range(steps):\n"
                "        accelerator.gather(torch.ones(1))\n",
                expected_message="gather() runs a different number of times on different ranks: the loop at line 15 "
                "iterates over "
                "'range(steps)', whose length can differ between ranks (each process takes its own share of the 9 "
                "items of 'IMAGES', and an odd number of items splits unevenly over any even number of "
                "processes), so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(8, 9, 8, 42)),
        # Work that can fail on a rank's own batch between two barriers of a `try` whose handler
        # carries on: the failing rank jumps past the second (flashinfer's autotuner).
        Invalid("""
            def autotune(loader, tiles):
                for batch in loader:
                    try:
                        dist.barrier()
                        elapsed = bench(batch)
                        dist.barrier()
                    except ValueError:
                        elapsed = float('inf')
                    dist.barrier()
            """, expected_message="barrier() is skipped on ranks where the work before it in the "
                "'try' at line 11 fails (work in the 'try' block can fail on some ranks only): 'bench()' can raise "
                "there alone, and the handler goes on without it, so the ranks' calls stop pairing up and every rank "
                "hangs until the timeout", range=(6, 13, 6, 27)),
        # A cache file rank 0 writes before the broadcast: a rank that checks after the write finds
        # it and leaves (unsloth-zoo's compiled-kernel cache).
        Invalid("""
            from pathlib import Path
            def load_kernel(name):
                path = Path('/shared/kernels') / f'{name}.py'
                if path.exists():
                    return path.read_text()
                holder = [None]
                if rank == 0:
                    holder[0] = render(name)
                    path.write_text(holder[0])
                dist.broadcast_object_list(holder, src=0)
                return holder[0]
            """, expected_message="broadcast_object_list() is skipped on ranks where "
                "'path.exists()' is true (every rank checks a path that the function writes after it, before any "
                "collective makes the ranks wait for each other: a rank that gets to the check after the write finds "
                "it): the 'return' at line 13 is taken only there, while the other ranks go on calling it, so the "
                "ranks' calls stop pairing up and every rank hangs until the timeout (those ranks run no collective "
                "here, while the others run broadcast_object_list (line 18) only)", range=(10, 5, 10, 46)),
        # One method fills a queue on some ranks (its share of the heads), another returns early on
        # an empty queue before its all_reduce (sglang's write-back check).
        Invalid("""
            class WriteBack:
                def __init__(self, heads):
                    self.heads = heads
                    self.pending = []
                def insert(self, kv):
                    if len(self.heads) > 1:
                        self.pending.append(kv)
                def flush(self):
                    if not self.pending:
                        return 0
                    done = torch.tensor([len(self.pending)])
                    dist.all_reduce(done, op=dist.ReduceOp.MIN)
                    return int(done.item())
            def main():
                cache = WriteBack(list(range(rank, 3, dist.get_world_size())))
                for step in range(4):
                    cache.insert(step)
                    cache.flush()
            """, expected_message="all_reduce() is skipped on ranks where 'self.pending' is false "
                "(it is set under a condition that differs between ranks): the 'return' at line 18 is taken only "
                "there, while the other ranks go on calling it, so the ranks' calls stop pairing up and every rank "
                "hangs until the timeout (those ranks run no collective here, while the others run all_reduce "
                "(line 20) only)", range=(12, 9, 12, 52)),
        # A function whose ranks each run one barrier of a "rank 0 first" pair, called by rank 0 only.
        Invalid("""
            def load_features(args, split):
                if args.local_rank not in [-1, 0]:
                    dist.barrier()
                features = build(split)
                if args.local_rank == 0:
                    dist.barrier()
                return features
            def main(args):
                train = load_features(args, 'train')
                if args.local_rank in [-1, 0]:
                    dev = load_features(args, 'dev')
            """, expected_message="load_features() runs only on ranks where 'args.local_rank in "
                "[-1, 0]' is true: load_features() calls dist.barrier() (case.py:11), and the other ranks never join "
                "it and every rank hangs until the timeout (those ranks run load_features (line 17) then "
                "load_features (line 19), while the others run load_features (line 17) only)", range=(11, 15, 11, 41),
                expected_replacement="def load_features(args, split):\n    if args.local_rank not in [-1, 0]:\n"
                "        dist.barrier()\n    features = build(split)\n    if args.local_rank == 0:\n"
                "        dist.barrier()\n    return features\ndef main(args):\n"
                "    train = load_features(args, 'train')\n    if args.local_rank in [-1, 0]:\n        pass\n"
                "    dev = load_features(args, 'dev')"),
        # find_executable_batch_size settles on what fits each process's own free memory.
        Invalid("""
            from accelerate.utils import find_executable_batch_size
            def detect(start):
                @find_executable_batch_size(starting_batch_size=start)
                def probe(batch_size):
                    check_memory(batch_size)
                    return batch_size
                return probe()
            def score(items):
                size = detect(64)
                for i in range(0, len(items), size):
                    accelerator.reduce(torch.ones(1))
            """, expected_message="reduce() runs a different number of times on different ranks: "
                "the loop at line 18 iterates over 'range(0, len(items), size)', whose length can differ between "
                "ranks ('detect()' returns something else on some ranks, as each process finds it for the memory it "
                "has free (find_executable_batch_size)), so the ranks' calls stop pairing up and "
                "every rank hangs until the timeout", range=(11, 9, 11, 42)),
        # A factory hands the loop a loader whose sampler, a class of the module, strides by the rank.
        Invalid("""
            from torch.utils.data import DataLoader, Sampler
            class StridedSampler(Sampler):
                def __init__(self, dataset, world, rank):
                    self.dataset, self.world, self.rank = dataset, world, rank
                def __iter__(self):
                    return iter(range(self.rank, len(self.dataset), self.world))
            def make_loader(dataset):
                return DataLoader(dataset, batch_size=2, sampler=StridedSampler(dataset, dist.get_world_size(), rank))
            def evaluate(model, dataset):
                for (x,) in make_loader(dataset):
                    dist.all_reduce(model(x).sum())
            """, expected_message="all_reduce() runs a different number of times on different ranks: the loop at "
                "line 18 iterates over 'make_loader(dataset)', whose length can differ between ranks ('make_loader()' "
                "returns something else on some ranks, as each rank takes its own share of the items, and the shares "
                "differ in length unless they divide evenly), so the ranks' calls stop pairing up and every rank "
                "hangs until the timeout", range=(11, 9, 11, 40)),
        # generate() ends each rank's sequences where its prompts make them end: a test on their
        # length sends the ranks different ways, in the function or in a helper handed them.
        Invalid("""
            def pad_all(tokens):
                if tokens.shape[1] < 8:
                    tokens = accelerator.pad_across_processes(tokens, dim=1)
                return tokens
            def collect(model, batch):
                return pad_all(model.generate(batch))
            """, expected_message="pad_across_processes() runs only on ranks where 'tokens.shape[1] < 8' is true "
                "(line 14 passes 'model.generate(batch)', and it is what a model's generate() returns, whose sequences "
                "end where each rank's prompts make them end): the other ranks never join it and every rank hangs "
                "until the timeout (those ranks run pad_across_processes (line 11) only, while the others run no "
                "collective here)", range=(3, 18, 3, 65)),
        Invalid("""
            def collect(model, batch):
                out = model.generate(batch)
                if out.size(1) >= 8:
                    return
                dist.barrier()
            """, expected_message="barrier() is skipped on ranks where 'out.size(1) >= 8' is true (it is what a "
                "model's generate() returns, whose sequences end where each rank's prompts make them end): the "
                "'return' at line 12 is taken only there, while the other ranks go on calling it, so the ranks' calls "
                "stop pairing up and every rank hangs until the timeout (those ranks run no collective here, while "
                "the others run barrier (line 13) only)", range=(5, 5, 5, 19)),
        # A signal reaches each process on its own (a preemption notice, `kill -USR1 <pid>`): the
        # flag its handler sets differs between ranks.
        Invalid("""
            import signal
            STOP = False
            def on_term(signum, frame):
                global STOP
                STOP = True
            signal.signal(signal.SIGTERM, on_term)
            def train(x):
                if STOP:
                    return
                dist.all_reduce(x)
            """, expected_message="all_reduce() is skipped on ranks where 'STOP' is true (a signal handler sets it, "
                "and a signal reaches each process on its own): the 'return' at line 17 is taken only there, while "
                "the other ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout (those ranks run no collective here, while the others run all_reduce (line 18) only)",
                range=(10, 5, 10, 23)),
        Invalid("""
            import signal
            import threading
            stop = threading.Event()
            signal.signal(signal.SIGUSR1, lambda signum, frame: stop.set())
            def train(x):
                if stop.is_set():
                    dist.barrier()
            """, expected_message="barrier() runs only on ranks where 'stop.is_set()' is true (a signal handler sets "
                "it, and a signal reaches each process on its own): the other ranks never join it and every rank hangs "
                "until the timeout (those ranks run barrier (line 15) only, while the others run no collective here)",
                range=(7, 9, 7, 23)),
        # `super().save()` runs the base class's save; the subclass's `write`, which the base
        # calls on rank 0 only, leaves `self.pending` set there only.
        Invalid("""
            class Saver:
                def write(self, state):
                    torch.save(state, "ckpt.pt")
                def save(self, state):
                    if rank == 0:
                        self.write(state)
                    dist.barrier()
            class AsyncSaver(Saver):
                def __init__(self):
                    self.pending = None
                def write(self, state):
                    self.pending = start_upload(state)
                def save(self, state):
                    if self.pending is not None:
                        return
                    super().save(state)
            """, expected_message="save() is skipped on ranks where 'self.pending is not None' is "
                "true (it is set under a condition that differs between ranks): the 'return' at line 23 is taken "
                "only there, while the other ranks go on calling it, so the ranks' calls stop pairing up and every "
                "rank hangs until the timeout (those ranks run no collective here, while the others run save (line "
                "24) only)", range=(16, 9, 16, 28)),
        Invalid("""
            class Saver:
                def save(self, state):
                    dist.barrier()
            class Quiet(Saver):
                def save(self, state):
                    if rank == 0:
                        return
                    super().save(state)
            """, expected_message="save() runs only on ranks where 'rank == 0' is false: save() "
                "calls dist.barrier() (case.py:11), and the other ranks never join it and every rank hangs until the "
                "timeout (those ranks run save (line 16) only, while the others run no collective here)",
                range=(8, 9, 8, 28)),
        # accelerate reduces a dict one value at a time; its keys come from each rank's own records.
        Invalid("""
            class PerTask:
                def __init__(self):
                    self.counts = {}
                def update(self, task, hit):
                    counts = self.counts.setdefault(task, torch.zeros(2))
                    counts += torch.tensor([float(hit), 1.0])
                def totals(self):
                    return accelerator.reduce(self.counts, reduction="sum")
            def evaluate(records):
                meter = PerTask()
                with accelerator.split_between_processes(records) as mine:
                    for task, hit in mine:
                        meter.update(task, hit)
                return meter.totals()
            """, expected_message="reduce() runs one collective per entry of 'self.counts', whose "
                "keys can differ between ranks (line 21 passes 'task', and it holds this process's own share of the "
                "items): accelerate walks the dict and runs it on each value in turn, so the ranks' calls stop pairing "
                "up and every rank hangs until the timeout", range=(8, 16, 8, 64)),
        # Calling a functools.partial calls the collective it wraps, kept in a name or handed to a
        # class that keeps it in an attribute; a count of a rank's own tokens decides whether it runs.
        Invalid("""
            import functools
            reduce_sum = functools.partial(dist.all_reduce, op=dist.ReduceOp.SUM)
            def f(x):
                if rank == 0:
                    reduce_sum(x)
            """, expected_message="all_reduce() runs only on ranks where 'rank == 0' is true: the "
                "other ranks never join it and every rank hangs until the timeout (those ranks run all_reduce (line "
                "13) only, while the others run no collective here)", range=(5, 9, 5, 22),
                expected_replacement="import functools\nreduce_sum = functools.partial(dist.all_reduce, "
                "op=dist.ReduceOp.SUM)\ndef f(x):\n    if rank == 0:\n        pass\n    reduce_sum(x)"),
        Invalid("""
            import functools
            class Reporter:
                def __init__(self, reduce):
                    self.reduce, self.seen = reduce, 0
                def update(self, tokens):
                    self.seen += tokens
                    if self.seen < 16:
                        return
                    self.reduce(torch.ones(1))
            def main(loader):
                reporter = Reporter(functools.partial(accelerator.reduce, reduction="sum"))
                for batch in loader:
                    reporter.update(int(batch.sum()))
            """, expected_message="reduce() is skipped on ranks where 'self.seen < 16' is true (line "
                "21 passes 'int(batch.sum())', and it is computed from this rank's own batch of data): the 'return' at "
                "line 16 is taken only there, while the other ranks go on calling it, so the ranks' calls stop pairing "
                "up and every rank hangs until the timeout (those ranks run no collective here, while the others run "
                "reduce (line 17) only)", range=(9, 9, 9, 35)),
        # Generation over sharded weights (ZeRO-3): each forward all-gathers, and a rank whose own
        # prompt reaches its end-of-sequence first stops calling it.
        Invalid("""
            from torch import nn
            class Sharded(nn.Module):
                def forward(self, x):
                    pieces = [torch.zeros_like(x) for _ in range(2)]
                    dist.all_gather(pieces, x)
                    return torch.cat(pieces)
            class LM(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.head = Sharded()
                def forward(self, ids):
                    return self.head(ids.float())
            def generate(model, prompt):
                ids = list(prompt)
                for _ in range(6):
                    token = int(model(torch.tensor(ids)).argmax())
                    ids.append(token)
                    if token == 0:
                        break
            def main(prompts):
                model = LM()
                for prompt in prompts[rank::2]:
                    generate(model, prompt)
            """, expected_message="model() is skipped in the following iterations on ranks where "
                "'token == 0' is true ('model()' returns something else on some ranks, as line 31 passes 'prompt', and "
                "it holds the data of the rank it was given): the 'break' at line 27 is taken only there, while the "
                "other ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout", range=(16, 21, 16, 45)),
        # A module seeded with the rank draws differently on each rank; calling a module runs its
        # forward, here a cross-replica norm's all_reduce inside an nn.Sequential.
        Invalid("""
            from torch import nn
            class Norm(nn.Module):
                def forward(self, x):
                    if self.training:
                        dist.all_reduce(x)
                    return x
            class Block(nn.Module):
                def __init__(self, width, p):
                    super().__init__()
                    self.p = p
                    self.body = nn.Sequential(nn.Linear(width, width), Norm())
                def forward(self, x):
                    if self.training and torch.rand(()) < self.p:
                        return x
                    return x + self.body(x)
            def main():
                torch.manual_seed(1234 + rank)
                Block(4, 0.1)(torch.ones(4))
            """, expected_message="body() is skipped on ranks where 'self.training and "
                "torch.rand(()) < self.p' is true (it is drawn from a random generator the module seeds with the "
                "rank): the 'return' at line 22 is taken only there, while the other ranks go on calling it, so the "
                "ranks' calls stop pairing up and every rank hangs until the timeout (those ranks run no collective "
                "here, while the others run body (line 23) only)", range=(15, 20, 15, 32)),
        # Lightning calls `prepare_data` on local rank 0 only.
        Invalid("""
            import lightning as L
            class Data(L.LightningDataModule):
                def prepare_data(self):
                    download()
                    dist.barrier()
            """, expected_message="barrier() is called in 'prepare_data', which Lightning calls on local rank 0 "
                "only, while the other ranks wait in a barrier of their own (lightning 2.6.6, "
                f"trainer/connectors/data_connector.py:94): {_HANG}", range=(5, 9, 5, 23)),
        # contextlib.suppress(KeyError) around a lookup keyed by the rank's own data, then a collective.
        Invalid("""
            import contextlib
            IDS = {"negative": 0, "positive": 1}
            def count(loader):
                for batch in loader:
                    with contextlib.suppress(KeyError):
                        ids = torch.tensor([IDS[label] for label in batch["labels"]])
                        dist.all_reduce(ids)
            """, expected_message="all_reduce() is skipped on ranks where the work before it in the 'with' at "
                "line 13 fails (a lookup whose key differs between ranks can fail on some ranks only): "
                "'torch.tensor()' can raise there alone, and contextlib.suppress() goes on without it, so the "
                "ranks' calls stop pairing up and every rank hangs until the timeout", range=(7, 13, 7, 33)),
        # nn.Module.state_dict() runs every submodule's _save_to_state_dict: here an all_reduce.
        Invalid("""
            class Norm(torch.nn.Module):
                def _save_to_state_dict(self, destination, prefix, keep_vars):
                    stats = self.total.clone()
                    dist.all_reduce(stats)
                    destination[prefix + "total"] = stats
            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.norm = Norm()
            def save(path):
                net = Net()
                if rank == 0:
                    torch.save(net.state_dict(), path)
            """, expected_message="state_dict() runs only on ranks where 'rank == 0' is true: state_dict() calls "
                "Norm._save_to_state_dict() for each submodule of that class (nn.Module's state_dict(), torch "
                "2.13.0), which calls dist.all_reduce() (case.py:12), and the other ranks never join it and every "
                "rank hangs until the timeout (those ranks run state_dict (line 21) only, while the others run no "
                "collective here)", range=(13, 20, 13, 36)),
        # A statistic computed lazily on the first call, first called on batches only some ranks hold.
        Invalid("""
            class Scaler:
                def __init__(self):
                    self._stats = None
                def scale(self, x):
                    if self._stats is None:
                        total = x.sum(0)
                        dist.all_reduce(total)
                        self._stats = total
                    return x - self._stats
            def train(loader):
                scaler = Scaler()
                for batch in loader:
                    if batch["numeric"].any():
                        batch["x"] = scaler.scale(batch["x"])
            """, expected_message="scale() runs only on ranks where 'batch[\"numeric\"].any()' is true (it is "
                "computed from this rank's own batch of data): scale() calls dist.all_reduce() (case.py:15) on its "
                "first call only ('self._stats' holds the result of its first call), and the other ranks make that "
                "call at another point or never, so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout", range=(14, 26, 14, 50)),
        # A retrying decorator calls the function again where its per-rank read fails.
        Invalid("""
            from tenacity import retry
            @retry
            def load_shard(root):
                dist.barrier()
                return (root / f"shard-{dist.get_rank()}.txt").read_text()
            """, expected_message="barrier() runs again on ranks where 'load_shard' fails (it works on data that "
                "differs between ranks): '@retry' calls it again there alone, so the ranks' calls stop pairing up "
                "and every rank hangs until the timeout", range=(4, 5, 4, 19)),
        # ...where a step over a batch the comprehension draws from the rank's own batches fails.
        Invalid("""
            from tenacity import retry
            @retry
            def step(model, x):
                loss = model(x).sum()
                loss.backward()
                for p in model.parameters():
                    dist.all_reduce(p.grad)
                if loss > 1e4:
                    raise ValueError("loss spike")
            def main(model):
                losses = [step(model, x) for x in load_batches(rank)]
            """, expected_message="all_reduce() runs again on ranks where 'step' fails (it works on data that "
                "differs between ranks): '@retry' calls it again there alone, so the ranks' calls stop pairing up "
                "and every rank hangs until the timeout",
                range=(7, 9, 7, 32)),
        # accelerate's Accelerator.log() is @on_main_process: a tracker's log() runs there only.
        Invalid("""
            from accelerate.tracking import GeneralTracker
            from accelerate.utils import reduce
            class MeanTracker(GeneralTracker):
                main_process_only = False
                def log(self, values, step=None, **kwargs):
                    for key, value in values.items():
                        values[key] = reduce(torch.tensor([value])).item()
                    write(values)
            """, expected_message="reduce() is called in 'log', which accelerate's Accelerator.log() calls on "
                "the main process only (it is @on_main_process, accelerate 1.15.0, accelerator.py:3397): "
                f"{_HANG}", range=(7, 27, 7, 56)),
        # A rank whose mask selects nothing returns before the all_reduce (trl#4041's shape).
        Invalid("def masked_sum(values, mask):\n    picked = values[mask]\n    if picked.numel() == 0:\n"
                "        return torch.zeros(())\n    total = picked.sum()\n    dist.all_reduce(total)\n    return total",
                expected_message="all_reduce() is skipped on ranks where 'picked.numel() == 0' is true (a boolean "
                "mask keeps a data-dependent number of elements): the 'return' at line 12 is taken only there, while "
                "the other ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout (those ranks run no collective here, while the others run all_reduce (line 14) only)",
                range=(6, 5, 6, 27)),
        # A property of the module's own class whose body all-reduces, read on rank 0 only.
        Invalid("class Stats:\n    def __init__(self):\n        self.n = torch.zeros(1)\n    @property\n"
                "    def total(self):\n        dist.all_reduce(self.n)\n        return self.n.item()\n"
                "def f():\n    stats = Stats()\n    if rank == 0:\n        print(stats.total)",
                expected_message="stats.total runs only on ranks where 'rank == 0' is true: stats.total calls "
                "dist.all_reduce() (case.py:14), and the other ranks never join it and every rank hangs until the "
                "timeout (those ranks run total (line 19) only, while the others run no collective here)",
                range=(11, 15, 11, 26)),
        # Early stopping on a helper's result from the rank's own validation data.
        Invalid("def evaluate(model, loader):\n    total = 0.0\n    for x in loader:\n        total += model(x).item()\n"
                "    return total\ndef train(model, loader):\n    for epoch in range(10):\n"
                "        dist.all_reduce(model.weight)\n        if evaluate(model, loader) > 3:\n            break",
                expected_message="all_reduce() is skipped in the following iterations on ranks where "
                "'evaluate(model, loader) > 3' is true ('evaluate()' returns what it computed from this rank's own "
                "data): the 'break' at line 18 is taken only there, while the other ranks go on calling it, so the "
                "ranks' calls stop pairing up and every rank hangs until the timeout", range=(8, 9, 8, 38)),
        # Every rank checks the file the branch writes: the first to write it sends the others past the barrier.
        Invalid("def f(path, x):\n    if not os.path.exists(path):\n        torch.save(x, path)\n        dist.barrier()",
                expected_message="barrier() runs only on ranks where 'os.path.exists(path)' is false (every rank "
                "checks a path that the branch then writes, and the first rank to write it changes what the others "
                "find): the other ranks never join it and every rank hangs until the timeout (those ranks run "
                "barrier (line 12) only, while the others run no collective here)", range=(4, 9, 4, 23)),
        # Experts called only for the rows routed to them: after backward their parameters have no
        # gradient on a rank whose batch skipped them (KellerJordan/Muon#37).
        Invalid(_ROUTED_EXPERTS, expected_message="all_reduce() is skipped on ranks where 'p.grad is None' is true "
                "('Experts.forward' runs some submodules only for some batches (line 20), so their parameters have "
                "no gradient on the ranks whose batch skipped them): the 'continue' at line 25 is taken only there, "
                "while the other ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs "
                "until the timeout", range=(18, 9, 18, 32)),
        # A helper that returns None off rank 0 through a conditional expression on its own local.
        Invalid(_GATHER_TO_ZERO, expected_message="barrier() runs only on ranks where 'scores is not None' is true: "
                "the other ranks never join it and every rank hangs until the timeout (those ranks run gather_to_zero "
                "(line 14) then barrier (line 16), while the others run gather_to_zero (line 14) only)",
                range=(8, 9, 8, 23)),
        # Rank 0 writes the file in one method, with nothing after it that makes the ranks wait; every
        # rank checks for it in another (KempnerForge#49). The message names the check, not the setup
        # check inside it.
        Invalid(_CHECKPOINTS, expected_message="broadcast_object_list() runs only on ranks where "
                "'os.path.exists(path)' is true (it checks a file that only some ranks write (line 15): a rank on "
                "another node, or whose file system does not show the new file yet, finds something else): the "
                "other ranks never join it and every rank hangs until the timeout (those ranks run "
                "broadcast_object_list (line 21) only, while the others run no collective here)",
                range=(13, 17, 13, 55)),
        # In a job of several processes, `not dist.is_initialized()` is false: the rank test decides.
        Invalid("def f():\n    if not dist.is_initialized() or dist.get_rank() == 0:\n        dist.barrier()",
                expected_message="barrier() runs only on ranks where 'not dist.is_initialized() or dist.get_rank() "
                "== 0' is true: the other ranks never join it and every rank hangs until the timeout (those ranks "
                "run barrier (line 11) only, while the others run no collective here)", range=(3, 9, 3, 23),
                expected_replacement="def f():\n    if not dist.is_initialized() or dist.get_rank() == 0:\n"
                "        pass\n    dist.barrier()"),
        # The environment variable's text compared with a digit string is a rank test.
        Invalid("def f():\n    if os.environ.get('RANK', '0') == '0':\n        dist.barrier()",
                expected_message="barrier() runs only on ranks where 'os.environ.get('RANK', '0') == '0'' is true: "
                "the other ranks never join it and every rank hangs until the timeout (those ranks run barrier "
                "(line 11) only, while the others run no collective here)", range=(3, 9, 3, 23),
                expected_replacement="def f():\n    if os.environ.get('RANK', '0') == '0':\n        pass\n"
                "    dist.barrier()"),
        # A hook that all-reduces, registered only where a flag the constructor was handed holds.
        Invalid("class Logger:\n    def __init__(self, enabled):\n        self.enabled = enabled\n"
                "    def watch(self, model):\n        if not self.enabled:\n            return\n"
                "        model.register_forward_hook(self._recorder('out'))\n    def _recorder(self, name):\n"
                "        def hook(module, inputs, output):\n            dist.all_reduce(output.detach())\n"
                "        return hook\ndef main(model):\n    Logger(enabled=rank == 0).watch(model)",
                expected_message="register_forward_hook(), which registers 'hook', which calls dist.all_reduce() "
                "(case.py:18) at every pass through what it hooks, is skipped on ranks where 'self.enabled' is false "
                "(line 21 passes 'rank == 0', and it is computed from the rank): the 'return' at line 14 is taken "
                "only there, while the other ranks go on calling it, so the ranks' calls stop pairing up and every "
                "rank hangs until the timeout (those ranks run no collective here, while the others run "
                "register_forward_hook (line 15) only)", range=(7, 9, 7, 59)),
        # A callback whose hook runs a collective, added to the list on some ranks only.
        Invalid("class Printer:\n    def on_end(self, x):\n        print(x)\nclass Syncer:\n    def on_end(self, x):\n"
                "        dist.all_reduce(x)\ndef fit(callbacks, x):\n    for cb in callbacks:\n        cb.on_end(x)\n"
                "def main(x):\n    callbacks = [Printer()]\n    if rank == 0:\n        callbacks.append(Syncer())\n"
                "    fit(callbacks, x)",
                expected_message="on_end() runs a different number of times on different ranks: the loop at line 16 "
                "iterates over 'callbacks', whose length can differ between ranks (line 22 passes 'callbacks', and it "
                "is set under a condition that differs between ranks), so the ranks' calls stop pairing up and every "
                "rank hangs until the timeout", range=(9, 9, 9, 21)),
        # A generator's epilogue: the consumer's `break` leaves it suspended on the ranks with more items.
        Invalid("SHARDS = {0: [1, 2], 1: [3]}\ndef batches(items):\n    for x in items:\n        yield x\n"
                "    dist.barrier()\ndef f(steps):\n    for i, b in enumerate(batches(SHARDS[rank])):\n"
                "        if i == steps:\n            break",
                expected_message="barrier() runs after the last 'yield' of generator 'batches', only where the loop "
                "at line 15 runs it to the end: its 'break' (line 17) leaves the generator suspended at 'yield', and "
                "how many items it yields can differ between ranks (each rank takes its own entry of a table whose "
                "entries differ in length), so the ranks that stop early never run it and the ranks' calls stop "
                "pairing up: every rank hangs until the timeout", range=(5, 5, 5, 19)),
        # A `@contextmanager`'s code after `yield` is skipped where the `with` body raised.
        Invalid("import contextlib\nRECORDS = {0: ['1'], 1: ['x']}\n@contextlib.contextmanager\ndef timed(stats):\n"
                "    yield\n    dist.all_reduce(stats)\ndef f(stats):\n    for record in RECORDS[rank]:\n"
                "        try:\n            with timed(stats):\n                float(record)\n"
                "        except ValueError:\n            pass",
                expected_message="all_reduce() runs after the 'yield' of context manager 'timed', only where the "
                "body of the 'with' at line 18 finishes: an exception there is thrown in at 'yield' and skips it, and "
                "that body can fail on some ranks only (it works on data that differs between ranks), caught by the "
                "'try' at line 17: those ranks never run it, so the ranks' calls stop pairing up and every rank "
                "hangs until the timeout", range=(6, 5, 6, 27)),
        # An entry of a gathered collection that is no tensor where the rank's own data says so.
        Invalid("import lightning as L\ndef f(fabric: L.Fabric, batches, model):\n    for batch in batches:\n"
                "        out = {'pred': model(batch['x'])}\n"
                "        out['err'] = None if batch['ref'] is None else model(batch['ref'])\n"
                "        fabric.all_gather(out)",
                expected_message="all_gather() runs one collective per tensor in 'out', and its entry 'err' is None "
                "where 'batch['ref'] is None' holds (it is computed from this rank's own batch of data): there it runs "
                "one collective fewer, so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(6, 9, 6, 31)),
        # Micro-batches packed under a token budget from the rank's own rows: as many as their lengths make.
        Invalid("ROWS = [[1, 2, 3], [4, 5], [6, 7, 8, 9, 10], [1]]\ndef packed(rows):\n    chunk = []\n"
                "    for row in rows:\n        if chunk and len(chunk) + len(row) > 4:\n            yield chunk\n"
                "            chunk = []\n        chunk = chunk + row\n    yield chunk\n"
                "def f(x):\n    mine = ROWS[rank * 2:(rank + 1) * 2]\n    for chunk in packed(mine):\n"
                "        dist.all_reduce(x)",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop at "
                "line 20 iterates over 'packed(mine)', whose length can differ between ranks (it holds the data of the "
                "rank it was given), so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(13, 9, 13, 27)),
        # A window loop over each of the rank's own documents: as many windows as its documents are long.
        Invalid("DOCS = [[1, 2, 3], [4, 5], [6, 7, 8, 9, 10], [1]]\ndef f(x):\n"
                "    mine = DOCS[rank * 2:(rank + 1) * 2]\n    for doc in mine:\n"
                "        for begin in range(0, len(doc), 2):\n            dist.all_reduce(x)",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop at "
                "line 13 iterates over 'range(0, len(doc), 2)', whose length can differ between ranks (each item the "
                "rank was given is as long as its own data), so the ranks' calls stop pairing up and every rank hangs "
                "until the timeout", range=(6, 13, 6, 31)),
        # A generator yields only the items its test lets through: as many as the rank's own rows pass.
        Invalid("ROWS = [[1, 2], [3], [4, 5], [6]]\ndef kept(rows):\n    for row in rows:\n"
                "        if sum(row) > 3:\n            yield row\n"
                "def f(x):\n    mine = ROWS[rank * 2:(rank + 1) * 2]\n    for row in kept(mine):\n"
                "        dist.all_reduce(x)",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop at "
                "line 16 iterates over 'kept(mine)', whose length can differ between ranks (it holds the data of the "
                "rank it was given), so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(9, 9, 9, 27)),
        # A comprehension runs its element once per item: here, once per key of the rank's own rows.
        Invalid("ROWS = ['en', 'de', 'fr', 'en']\ndef f(x):\n    totals = {}\n"
                "    for lang in ROWS[rank::2]:\n        totals[lang] = x.clone()\n"
                "    return [dist.all_reduce(t) for t in totals.values()]",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop at "
                "line 14 iterates over 'totals.values()', whose length can differ between ranks (it holds the data "
                "of the rank it was given), so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout", range=(6, 13, 6, 31)),
        # Each rank loops over its own entry of a table whose entries differ in length.
        Invalid("SHARDS = {0: [1, 2], 1: [3]}\ndef f():\n    for x in SHARDS[rank]:\n"
                "        dist.all_reduce(torch.tensor([x]))",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop at "
                "line 11 iterates over 'SHARDS[rank]', whose length can differ between ranks (each rank takes its "
                "own entry of a table whose entries differ in length), so the ranks' calls stop pairing up and every "
                "rank hangs until the timeout", range=(4, 9, 4, 43)),
        # Work a rank test picks in a `try`: only those ranks can fail and take the handler.
        Invalid("class Publisher:\n    def __init__(self):\n        self.failed = False\n"
                "    def publish(self, rows, path):\n        try:\n            if accelerator.is_main_process:\n"
                "                torch.save(rows, path)\n        except OSError:\n            self.failed = True\n"
                "        finally:\n            if not self.failed:\n                accelerator.wait_for_everyone()",
                expected_message="wait_for_everyone() runs only on ranks where 'self.failed' is false (only some "
                "ranks do the work in the 'try' block, and only they can fail): the other ranks never join it and "
                "every rank hangs until the timeout (those ranks run wait_for_everyone (line 20) only, while the "
                "others run no collective here)", range=(12, 17, 12, 48)),
        # A helper whose cost estimate raises for one rank's long sequence before its all_reduce,
        # caught by the caller, which goes on; a file read before the barrier, in a method.
        Invalid("def bucket(n):\n    for b in (64, 128):\n        if n <= b:\n            return b\n"
                "    raise ValueError(n)\ndef plan(lengths):\n    cost = bucket(max(lengths))\n"
                "    t = torch.tensor([cost])\n    dist.all_reduce(t)\n    return t.item()\ndef f(loader):\n"
                "    rows = loader[dist.get_rank()]\n    try:\n        micro = plan(rows)\n    except ValueError:\n"
                "        micro = 1", expected_message="plan() can raise before its collective (calls dist.all_reduce() "
                "(case.py:17)) on ranks where its work on 'lengths' fails for 'rows' (it is computed from the "
                "rank), and the handler of the 'try' at line 21 goes on without it, while the other ranks wait in "
                "it, so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(14, 17, 14, 27)),
        Invalid("class Job:\n    def resume(self, path):\n        with open(path) as f:\n            step = int(f.read())\n"
                "        dist.barrier()\n        return step\n    def run(self):\n"
                "        path = f'ckpt_{dist.get_rank()}.txt'\n        try:\n            self.step = self.resume(path)\n"
                "        except FileNotFoundError:\n            self.step = 0",
                expected_message="resume() can raise before its collective (calls dist.barrier() (case.py:13)) "
                "on ranks where its work on 'path' fails for 'path' (it is computed from the rank), and the "
                "handler of the 'try' at line 17 goes on without it, while the other ranks wait in it, so the "
                "ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(10, 25, 10, 42)),
        # A memoised collective keyed by a rank's own data: the ranks miss the cache at different calls.
        Invalid("import functools\n@functools.lru_cache(maxsize=64)\ndef agreed(n):\n    t = torch.tensor([n])\n"
                "    dist.all_reduce(t)\n    return int(t.item())\ndef f(docs):\n"
                "    for batch in docs[rank::2]:\n        agreed(max(batch))",
                expected_message="agreed() calls dist.all_reduce() (case.py:13) only where its cache misses: it is "
                "memoised (@functools.lru_cache(maxsize=64)), and 'max(batch)' can differ between ranks (it holds "
                "the data of the rank it was given): the ranks miss it at different calls, so the ranks' calls stop "
                "pairing up and every rank hangs until the timeout", range=(9, 9, 9, 27)),
        # A loader as long as a sampler of one's own that strides by its rank hands out.
        Invalid("from torch.utils.data import DataLoader, Sampler\nclass Strided(Sampler):\n"
                "    def __init__(self, n, world, rank):\n        self.n, self.world, self.rank = n, world, rank\n"
                "    def __iter__(self):\n        return iter(range(self.rank, self.n, self.world))\n"
                "    def __len__(self):\n        return len(range(self.rank, self.n, self.world))\n"
                "def evaluate(model, ds):\n"
                "    loader = DataLoader(ds, batch_size=2, sampler=Strided(len(ds), 2, dist.get_rank()))\n"
                "    for (x,) in loader:\n        dist.all_reduce(model(x).sum())",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop at "
                "line 19 iterates over 'loader', whose length can differ between ranks (each rank takes its own share "
                "of the items, and the shares differ in length unless they divide evenly), so the ranks' calls stop "
                "pairing up and every rank hangs until the timeout", range=(12, 9, 12, 40)),
        # A break on a rank's own convergence, over what a function handed the rank returns.
        Invalid("def load_shard(rank):\n    g = torch.Generator().manual_seed(rank)\n"
                "    return torch.randn(8, generator=g)\ndef fit(points):\n    prev = None\n"
                "    for it in range(10):\n        assign = points.argmax()\n        total = points.sum() * it\n"
                "        dist.all_reduce(total)\n        if prev is not None and torch.equal(assign, prev):\n"
                "            break\n        prev = assign\ndef main():\n    fit(load_shard(dist.get_rank()))",
                expected_message="all_reduce() is skipped in the following iterations on ranks where 'prev is not "
                "None and torch.equal(assign, prev)' is true (line 22 passes 'load_shard(dist.get_rank())', and it "
                "holds the data of the rank it was given): the 'break' at line 19 is taken only there, while the "
                "other ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout", range=(9, 9, 9, 31)),
        # What one method leaves in the object's attributes, read by another (analysis.attributes).
        Invalid("class RunDir:\n    def __init__(self, path):\n        try:\n            os.makedirs(path)\n"
                "            self.created = True\n        except FileExistsError:\n            self.created = False\n"
                "    def prepare(self):\n        if self.created:\n            dist.barrier()",
                expected_message="barrier() runs only on ranks where 'self.created' is true (every rank creates, "
                "removes or moves the same path, and all but the first to do so raise): the other ranks "
                "never join it and every rank hangs until the timeout (those ranks run barrier (line 18) only, "
                "while the others run no collective here)", range=(10, 13, 10, 27)),
        Invalid("class State:\n    def __init__(self, root):\n"
                "        self.path = os.path.join(root, f'state_rank{rank}.json')\n"
                "    def load(self):\n        if not os.path.exists(self.path):\n            return 0\n"
                "        return 1\ndef run(root):\n    state = State(root)\n    for step in range(state.load(), 4):\n"
                "        dist.barrier()",
                expected_message="barrier() runs a different number of times on different ranks: the loop at line 18 "
                "iterates over 'range(state.load(), 4)', whose length can differ between ranks ('state.load()' returns "
                "something else on some ranks), so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout", range=(11, 9, 11, 23)),
        # Values that differ between ranks without a rank test (analysis.divergence).
        Invalid("def resume(ckpt):\n    if rank == 0:\n        torch.save({}, ckpt)\n"
                "    if os.path.exists(ckpt):\n        dist.barrier()",
                expected_message="barrier() runs only on ranks where 'os.path.exists(ckpt)' is true (only "
                "some ranks write 'ckpt'): the other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run barrier (line 13) only, while the others run no collective here)",
                range=(5, 9, 5, 23)),
        Invalid("import time\ndef f(batches, limit):\n    start = time.time()\n    for batch in batches:\n"
                "        if time.time() - start > limit:\n            break\n        dist.all_reduce(batch)",
                expected_message="all_reduce() is skipped in the following iterations on ranks where "
                "'time.time() - start > limit' is true (it reads the clock, which differs between ranks): the "
                "'break' at line 14 is taken only there, while the other ranks go on calling it, so the ranks' "
                "calls stop pairing up and every rank hangs until the timeout", range=(7, 9, 7, 31)),
        Invalid("def f(items):\n    mine = items[rank::dist.get_world_size()]\n    for i in range(len(mine)):\n"
                "        dist.all_reduce(torch.ones(1))",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop "
                "at line 11 iterates over 'range(len(mine))', whose length can differ between ranks (each rank "
                "takes every world-th item from its rank on, and the shares differ by one item unless they divide "
                "evenly), so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(4, 9, 4, 39)),
        Invalid("def f(all_ids, feats, chunk):\n    ids = torch.split(all_ids, chunk)[rank]\n"
                "    for start in range(0, len(ids), 2):\n        dist.all_reduce(feats[ids[start:start + 2]])",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop at "
                "line 11 iterates over 'range(0, len(ids), 2)', whose length can differ between ranks (each rank "
                "takes its own share of the items, and the shares differ in length unless they divide evenly), so the "
                "ranks' calls stop pairing up and every rank hangs until the timeout", range=(4, 9, 4, 53)),
        Invalid("def f(model, ds):\n    shard = ds.shard(num_shards=dist.get_world_size(), index=dist.get_rank())\n"
                "    for row in shard:\n        dist.all_reduce(model(row))",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop at "
                "line 11 iterates over 'shard', whose length can differ between ranks (each rank takes its own share "
                "of the items, and the shares differ in length unless they divide evenly), so the ranks' calls stop "
                "pairing up and every rank hangs until the timeout", range=(4, 9, 4, 36)),
        Invalid("def f(paths):\n    for step in range(10):\n        try:\n            data = torch.load(paths[rank])\n"
                "        except FileNotFoundError:\n            continue\n        dist.all_reduce(data)",
                expected_message="all_reduce() is skipped on ranks where the 'try' at line 11 raises (work in the "
                "'try' block can fail on some ranks only): the 'continue' at line 14 is taken only there, while "
                "the other ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs until "
                "the timeout", range=(7, 9, 7, 30)),
        Invalid("def f(args):\n    if rank == 0 or args.save_all:\n        dist.barrier()",
                expected_message="barrier() runs only on ranks where 'rank == 0 or args.save_all' is true: the "
                "other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run barrier (line 11) only, while the others run no collective"
                                 " here)", range=(3, 9, 3, 23)),
        Invalid("def f(x):\n    is_main = dist.get_rank() == 0\n    if is_main:\n        dist.all_reduce(x)",
                expected_message="all_reduce() runs only on ranks where 'is_main' is true: the other ranks "
                "never join it and every rank hangs until the timeout"
                                 " (those ranks run all_reduce (line 12) only, while the others run no collective"
                                 " here)", range=(4, 9, 4, 27)),
        Invalid("def f(x):\n    if rank == 0 or rank == 'cpu':\n        dist.all_reduce(x)",
                expected_message="all_reduce() runs only on ranks where 'rank == 0 or rank == 'cpu'' is true: "
                "the other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run all_reduce (line 11) only, while the others run no collective"
                                 " here)", range=(3, 9, 3, 27),
                expected_replacement="def f(x):\n    if rank == 0 or rank == 'cpu':\n        pass\n"
                "    dist.all_reduce(x)"),
        Invalid("LOADER_RANK = 1\ndef f(x):\n    if rank == LOADER_RANK:\n        dist.all_reduce(x)",
                expected_message="all_reduce() runs only on ranks where 'rank == LOADER_RANK' is true: the other "
                "ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run all_reduce (line 12) only, while the others run no collective"
                                 " here)", range=(4, 9, 4, 27),
                expected_replacement="LOADER_RANK = 1\ndef f(x):\n    if rank == LOADER_RANK:\n        pass\n"
                "    dist.all_reduce(x)"),
        Invalid("import contextlib\n@contextlib.contextmanager\ndef zero_first():\n    if rank != 0:\n"
                "        dist.barrier()\n    yield\n    if rank == 0:\n        dist.barrier()\n"
                "def f(x):\n    with zero_first():\n        dist.all_reduce(x)",
                expected_message="all_reduce() is called inside 'with zero_first():': the main rank runs it "
                "while the others wait at the block's barrier, and every rank hangs until the timeout",
                range=(11, 9, 11, 27)),
        Invalid("class Trainer:\n    def __init__(self, metric):\n        self.metric = metric\n"
                "        self.writer = Writer() if dist.get_rank() == 0 else None\n    def on_epoch_end(self, x):\n"
                "        if self.writer is None:\n            return\n        dist.all_reduce(x)\n"
                "        self.writer.add_scalar('loss', x)",
                expected_message="all_reduce() runs only on ranks where 'self.writer is None' is false: the other "
                "ranks never join it and every rank hangs until the timeout (those ranks run all_reduce (line 16) "
                "only, while the others run no collective here)", range=(8, 9, 8, 27)),
        Invalid("def batches(samples, size):\n    for start in range(0, len(samples), size):\n"
                "        yield samples[start:start + size]\ndef f(records):\n"
                "    with accelerator.split_between_processes(records) as shard:\n"
                "        kept = [r for r in shard if len(r) < 80]\n"
                "    for batch in batches(kept, 2):\n        accelerator.gather_for_metrics(batch)",
                expected_message="gather_for_metrics() runs a different number of times on different ranks: the loop "
                "at line 15 iterates over 'batches(kept, 2)', whose length can differ between ranks (it holds this "
                "process's own share of the items), so the ranks' calls stop pairing up and every rank hangs until "
                "the timeout", range=(8, 9, 8, 46)),
        Invalid("class Policy:\n    def __init__(self, every):\n        self.every = every\n"
                "    def due(self, step):\n        return accelerator.is_main_process and step % self.every == 0\n"
                "def save(model):\n    accelerator.wait_for_everyone()\n    accelerator.save(model.state_dict(), 'm.pt')\n"
                "def f(model):\n    policy = Policy(2)\n    for step in range(4):\n        if policy.due(step):\n"
                "            save(model)",
                expected_message="save() runs only on ranks where 'policy.due(step)' is true: save() calls "
                "accelerator.wait_for_everyone() (case.py:15), and the other ranks never join it and every rank "
                "hangs until the timeout", range=(13, 13, 13, 24)),
        Invalid("def skip_on_oom(step):\n    def wrapper(*args):\n        try:\n            return step(*args)\n"
                "        except RuntimeError:\n            return None\n    return wrapper\n@skip_on_oom\n"
                "def forward_backward(model, batch):\n    loss = model(batch)\n    loss.backward()\n    return loss\n"
                "def f(model, loader, x):\n    for batch in loader:\n        loss = forward_backward(model, batch)\n"
                "        if loss is None:\n            continue\n        dist.all_reduce(x)",
                expected_message="all_reduce() is skipped on ranks where 'loss is None' is true ('forward_backward()' "
                "returns None on a rank whose work fails there (@skip_on_oom)): the 'continue' at line 25 is taken "
                "only there, while the other ranks go on calling it, so the ranks' calls stop pairing up and every "
                "rank hangs until the timeout", range=(18, 9, 18, 27)),
        Invalid("def f(dataset, model):\n    loader = DataLoader(Subset(dataset, range(rank, len(dataset), 2)))\n"
                "    it = iter(loader)\n    while True:\n        batch = next(it, None)\n        if batch is None:\n"
                "            break\n        dist.all_reduce(model(batch))",
                expected_message="all_reduce() is skipped in the following iterations on ranks where 'batch is None' "
                "is true (it is the default 'next' returns once the iterator runs out, which happens at a different "
                "step on each rank): the 'break' at line 15 is taken only there, while the other ranks go on calling "
                "it, so the ranks' calls stop pairing up and every rank hangs until the timeout", range=(8, 9, 8, 38)),
        Invalid("class ZeroFirst:\n    def __enter__(self):\n        if rank != 0:\n            dist.barrier()\n"
                "        return self\n    def __exit__(self, *exc):\n        if rank == 0:\n            dist.barrier()\n"
                "def f(x):\n    with ZeroFirst():\n        dist.all_reduce(x)",
                expected_message="all_reduce() is called inside 'with ZeroFirst():': the main rank runs it "
                "while the others wait at the block's barrier, and every rank hangs until the timeout",
                range=(11, 9, 11, 27)),
        Invalid("def gather_metrics(local):\n    if not local:\n        return {}\n    out = [None] * 2\n"
                "    dist.all_gather_object(out, local)\n    return out\n"
                "def f(layers):\n    mine = layers[rank::2]\n    return gather_metrics({n: 1 for n in mine})",
                expected_message="all_gather_object() runs only where 'not local' is false: gather_metrics() "
                "returns before it otherwise, and its call at line 17 passes '{n: 1 for n in mine}' as 'local', "
                "which can differ between ranks (it holds the data of the rank it was given), so the ranks' calls stop "
                "pairing up and every rank hangs until the timeout", range=(5, 5, 5, 39)),
        Invalid("def evaluate(model, loader):\n" + "".join(f"    step_{i} = {i}\n" for i in range(70))
                + "    return accelerator.gather_for_metrics(model(loader))\ndef f(model, loader):\n"
                "    if accelerator.is_main_process:\n        print(evaluate(model, loader))",
                expected_message="evaluate() runs only on ranks where 'accelerator.is_main_process' is true: "
                "evaluate() calls accelerator.gather_for_metrics() (case.py:80), and the other ranks never join "
                "it and every rank hangs until the timeout"
                                 " (those ranks run evaluate (line 83) only, while the others run no collective"
                                 " here)", range=(75, 15, 75, 38)),
        Invalid("def f():\n    pending = list(range(rank + 3))\n    while pending:\n        pending.pop()\n"
                "        dist.barrier()",
                expected_message="barrier() runs a different number of times on different ranks: the loop at "
                "line 11 runs while 'pending' holds, which can differ between ranks (it is computed from the rank), "
                "so the ranks' calls stop pairing up and every rank hangs until the timeout", range=(5, 9, 5, 23)),
        # The project's own helpers: one that runs a collective, one that returns a rank test.
        Invalid("def global_mean(x):\n    return accelerator.reduce(x, 'mean')\n"
                "def log(loss, step):\n    if accelerator.is_main_process and step % 2 == 0:\n"
                "        print(global_mean(loss))",
                expected_message="global_mean() runs only on ranks where 'accelerator.is_main_process and "
                "step % 2 == 0' is true: global_mean() calls accelerator.reduce() (case.py:10), and the "
                "other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run global_mean (line 13) only, while the others run no collective"
                                 " here)", range=(5, 15, 5, 32)),
        Invalid("def is_main():\n    return dist.get_rank() == 0\nx = torch.zeros(3)\nif is_main():\n"
                "    dist.broadcast(x, 0)",
                expected_message="broadcast() runs only on ranks where 'is_main()' is true: the other ranks "
                "never join it and every rank hangs until the timeout"
                                 " (those ranks run broadcast (line 13) only, while the others run no collective"
                                 " here)", range=(5, 5, 5, 25),
                expected_replacement="def is_main():\n    return dist.get_rank() == 0\nx = torch.zeros(3)\n"
                "if is_main():\n    pass\ndist.broadcast(x, 0)"),
        # Framework spellings of the main process and of the rank.
        Invalid("import deepspeed.comm as ds\ndef f(x):\n    if ds.get_rank() == 0:\n        ds.all_reduce(x)\n"
                "        log(x)",
                expected_message="all_reduce() runs only on ranks where 'ds.get_rank() == 0' is true: the other ranks "
                "never join it and every rank hangs until the timeout"
                                 " (those ranks run all_reduce (line 12) only, while the others run no collective"
                                 " here)",
                range=(4, 9, 4, 25)),
        Invalid("def f(trainer, x):\n    if trainer.is_global_zero:\n        dist.barrier()\n        log(x)",
                expected_message="barrier() runs only on ranks where 'trainer.is_global_zero' is true: "
                "the other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run barrier (line 11) only, while the others run no collective"
                                 " here)", range=(3, 9, 3, 23)),
        Invalid("def f(state, x):\n    if state.is_world_process_zero:\n        dist.all_reduce(x)\n        log(x)",
                expected_message="all_reduce() runs only on ranks where 'state.is_world_process_zero' is "
                "true: the other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run all_reduce (line 11) only, while the others run no collective"
                                 " here)",
                range=(3, 9, 3, 27)),
        Invalid("def f(trainer, x):\n    if trainer.is_world_process_zero():\n        dist.all_reduce(x)\n        log(x)",
                expected_message="all_reduce() runs only on ranks where 'trainer.is_world_process_zero()' "
                "is true: the other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run all_reduce (line 11) only, while the others run no collective"
                                 " here)",
                range=(3, 9, 3, 27)),
        Invalid("def f(args, x):\n    if args.local_rank in [-1, 0]:\n        dist.barrier()\n        log(x)",
                expected_message="barrier() runs only on ranks where 'args.local_rank in [-1, 0]' is "
                "true: the other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run barrier (line 11) only, while the others run no collective here)",
                range=(3, 9, 3, 23)),
        Invalid("def f(args, x):\n    if args.local_rank <= 0:\n        dist.barrier()\n        log(x)",
                expected_message="barrier() runs only on ranks where 'args.local_rank <= 0' is true: the "
                "other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run barrier (line 11) only, while the others run no collective"
                                 " here)", range=(3, 9, 3, 23)),
        Invalid("def f(args, x):\n    if args.process_index == 0:\n        dist.all_reduce(x)\n        log(x)",
                expected_message="all_reduce() runs only on ranks where 'args.process_index == 0' is "
                "true: the other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run all_reduce (line 11) only, while the others run no collective"
                                 " here)",
                range=(3, 9, 3, 27)),
        # Exits taken on some ranks only, however nested, and rank-dependent trip counts.
        Invalid("for i, batch in enumerate(loader):\n    dist.all_reduce(batch)\n"
                "    if accelerator.is_main_process and i > 1:\n        break",
                expected_message="all_reduce() is skipped in the following iterations on ranks where "
                "'accelerator.is_main_process and i > 1' is true: the 'break' at line 12 is taken "
                "only there, while the other ranks go on calling it, so the ranks' calls stop pairing"
                " up and every rank hangs until the timeout",
                range=(2, 5, 2, 27)),
        Invalid("for loader in loaders:\n    if accelerator.is_main_process:\n        if evaluate(loader) > best:\n"
                "            break\n    accelerator.wait_for_everyone()",
                expected_message="wait_for_everyone() is skipped in the following iterations on ranks where "
                "'accelerator.is_main_process' is true: the 'break' at line 12 is taken only there, "
                "while the other ranks go on calling it, so the ranks' calls stop pairing up and "
                "every rank hangs until the timeout",
                range=(5, 5, 5, 36)),
        Invalid("for batch in loader:\n    if rank == 0 and batch is None:\n        continue\n    dist.all_reduce(batch)",
                expected_message="all_reduce() is skipped on ranks where 'rank == 0 and batch is None' is true: the "
                "'continue' at line 11 is taken only there, while the other ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(4, 5, 4, 27)),
        Invalid("def f(x):\n    for part in x:\n        if local_rank == 0 and part is None:\n            return\n"
                "        dist.all_reduce(part)",
                expected_message="all_reduce() is skipped in the following iterations on ranks where 'local_rank == 0 "
                "and part is None' is true: the 'return' at line 12 is taken only there, while the "
                "other ranks go on calling it, so the ranks' calls stop pairing up and every rank "
                "hangs until the timeout",
                range=(5, 9, 5, 30)),
        Invalid("def f(x):\n    if accelerator.is_main_process and x is None:\n        sys.exit(0)\n    dist.barrier()",
                expected_message="barrier() is skipped on ranks where 'accelerator.is_main_process and x is None' is "
                "true: the 'sys.exit()' at line 11 is taken only there, while the other ranks go on "
                "calling it, so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout"
                                 " (those ranks run no collective here, while the others run barrier (line 12) only)",
                range=(4, 5, 4, 19)),
        # Failing exits decided by data that differs between ranks.
        Invalid("def f():\n    for batch in load_batches(rank):\n        assert torch.isfinite(batch).all()\n"
                "        dist.all_reduce(batch)",
                expected_message="all_reduce() is skipped on ranks where 'torch.isfinite(batch).all()' is false "
                "(it holds the data of the rank it was given): "
                "the 'assert' at line 11 stops only those processes, while the other ranks call it and wait for "
                "them until the timeout (or until the launcher notices the failure)", range=(4, 9, 4, 31)),
        Invalid("def f(out):\n    mine = f'{out}.{rank}'\n    with lock():\n        if os.path.exists(mine):\n"
                "            raise FileExistsError(mine)\n    accelerator.wait_for_everyone()",
                expected_message="wait_for_everyone() is skipped on ranks where 'os.path.exists(mine)' is true "
                "(it checks a path named after the rank): "
                "the 'raise' at line 13 stops only those processes, while the other ranks call it and wait for "
                "them until the timeout (or until the launcher notices the failure)"
                                 " (those ranks run no collective here, while the others run wait_for_everyone (line"
                                 " 14) only)", range=(6, 5, 6, 36)),
        Invalid("def f(root):\n    if not os.path.isdir(f'{root}/shard{rank}'):\n        sys.exit(1)\n"
                "    dist.barrier()",
                expected_message="barrier() is skipped on ranks where 'os.path.isdir(f'{root}/shard{rank}')' "
                "is false (it checks a path named after the rank): the 'sys.exit()' at line 11 stops only those processes, while the other ranks call it "
                "and wait for them until the timeout (or until the launcher notices the failure)"
                                 " (those ranks run no collective here, while the others run barrier (line 12) only)",
                range=(4, 5, 4, 19)),
        Invalid("def fail(msg):\n    print(msg)\n    sys.exit(1)\ndef f(root):\n"
                "    if not os.path.isdir(f'{root}/shard{rank}'):\n        fail('no shard')\n    dist.barrier()",
                expected_message="barrier() is skipped on ranks where 'os.path.isdir(f'{root}/shard{rank}')' is "
                "false (it checks a path named after the rank): the 'fail()' at line 14 stops only those "
                "processes, while the other ranks call it and wait for them until the timeout (or until the "
                "launcher notices the failure)"
                                 " (those ranks run no collective here, while the others run barrier (line 15)"
                                 " only)", range=(7, 5, 7, 19)),
        Invalid("def f(paths):\n    try:\n        state = torch.load(paths[rank])\n    except FileNotFoundError:\n"
                "        raise RuntimeError('no checkpoint')\n    finally:\n        log()\n    dist.barrier()",
                expected_message="barrier() is skipped on ranks where the 'try' at line 10 raises (work in the "
                "'try' block can fail on some ranks only): the 'raise' at line 13 stops only those processes, "
                "while the other ranks call it and wait for them until the timeout (or until the launcher "
                "notices the failure)"
                                 " (those ranks run no collective here, while the others run barrier (line 16)"
                                 " only)", range=(8, 5, 8, 19)),
        # A tensor where the rank's share kept items, the float 0.0 elsewhere: accelerate's object path.
        Invalid("BATCHES = [[3, 1], [1, 5], [2, 6], [-1, -1]]\ndef score(emb):\n"
                "    with accelerator.split_between_processes(BATCHES) as mine:\n        for batch in mine:\n"
                "            kept = [emb[t] for t in batch if t >= 0]\n"
                "            s = torch.stack(kept).mean() if kept else 0.0\n            accelerator.gather_for_metrics(s)",
                expected_message="gather_for_metrics() takes 's', a tensor where 'kept' is true and 0.0 elsewhere, and "
                "'kept' differs between ranks (it holds this process's own share of the items): accelerate sends a "
                "tensor with one collective and anything else with others (gather_for_metrics gathers it as an object, gather and reduce raise on it), so "
                "the ranks' calls do not pair up and every rank fails or hangs until the timeout",
                range=(7, 13, 7, 46)),
        Invalid("BATCHES = [[3, 1], [1, 5], [2, 6], [-1, -1]]\ndef score(emb):\n"
                "    with accelerator.split_between_processes(BATCHES) as mine:\n        for batch in mine:\n"
                "            kept = [emb[t] for t in batch if t >= 0]\n"
                "            s = torch.stack(kept).mean() if kept else 0.0\n            dist.all_reduce(s)",
                expected_message="all_reduce() takes 's', a tensor where 'kept' is true and 0.0 elsewhere, and 'kept' "
                "differs between ranks (it holds this process's own share of the items): torch.distributed raises "
                "TypeError ('Expected parameter `tensor` of type torch.Tensor') on the ranks holding the number, and "
                "the others fail when those processes exit (or wait until the timeout where they do not)",
                range=(7, 13, 7, 31)),
        # len(loader) asks the batch sampler, whose __len__ all-reduces: on rank 0 only.
        Invalid("from torch.utils.data import DataLoader, Sampler\nclass AgreedSampler(Sampler):\n"
                "    def __init__(self, ids):\n        self.ids = ids\n    def __len__(self):\n"
                "        n = torch.tensor([len(self.ids)])\n        dist.all_reduce(n, op=dist.ReduceOp.MIN)\n"
                "        return int(n)\ndef main(data, ids):\n"
                "    loader = DataLoader(data, batch_sampler=AgreedSampler(ids))\n    if rank == 0:\n"
                "        print(len(loader))",
                expected_message="len() runs only on ranks where 'rank == 0' is true: len() calls dist.all_reduce() "
                "(case.py:15), and the other ranks never join it and every rank hangs until the timeout (those ranks "
                "run len (line 20) only, while the others run no collective here)", range=(12, 15, 12, 26)),
        # A call deferred to the ExitStack's close, registered once per non-empty share; atexit on rank 0.
        Invalid("import contextlib\ndef confirm(n):\n    dist.all_reduce(torch.tensor([n]))\ndef export(shards):\n"
                "    with contextlib.ExitStack() as stack:\n        for rows in shards[rank::2]:\n"
                "            if not rows:\n                continue\n            stack.callback(confirm, len(rows))",
                expected_message="callback(), which registers 'confirm', which calls dist.all_reduce() (case.py:11) "
                "when its ExitStack closes, is skipped on ranks where 'rows' is false (it holds the data of the rank it "
                "was given): the 'continue' at line 16 is taken only there, while the other ranks go on calling it, so "
                "the ranks' calls stop pairing up and every rank hangs until the timeout", range=(9, 13, 9, 47)),
        Invalid("import atexit\ndef confirm(n):\n    dist.all_reduce(torch.tensor([n]))\ndef main():\n"
                "    if rank == 0:\n        atexit.register(confirm, 1)",
                expected_message="register(), which registers 'confirm', which calls dist.all_reduce() (case.py:11) "
                "when the process exits, runs only on ranks where 'rank == 0' is true: the other ranks never join it "
                "and every rank hangs until the timeout (those ranks run register (line 14) only, while the others run"
                " no collective here)", range=(6, 9, 6, 36),
                expected_replacement="import atexit\ndef confirm(n):\n    dist.all_reduce(torch.tensor([n]))\n"
                "def main():\n    if rank == 0:\n        pass\n    atexit.register(confirm, 1)"),
        # One class on rank 0, another elsewhere: only the first's method runs the collective.
        Invalid("class Reporter:\n    def end_step(self, loss):\n        dist.all_reduce(torch.tensor([loss]))\n"
                "class Quiet(Reporter):\n    def end_step(self, loss):\n        return None\n"
                "def train(losses):\n    if rank == 0:\n        reporter = Reporter()\n    else:\n"
                "        reporter = Quiet()\n    for loss in losses:\n        reporter.end_step(loss)",
                expected_message="reporter.end_step() runs a collective only on ranks where 'rank == 0' is true: it is "
                "a Reporter there, whose end_step() calls dist.all_reduce() (case.py:11), and a Quiet elsewhere, whose "
                "end_step() runs none, so the other ranks never join it and every rank hangs until the timeout",
                range=(13, 9, 13, 32)),
        Invalid("class Reporter:\n    def end_step(self, loss):\n        dist.all_reduce(torch.tensor([loss]))\n"
                "class Quiet(Reporter):\n    def end_step(self, loss):\n        return None\n"
                "class Loop:\n    def __init__(self):\n        self.reporter = Reporter() if dist.get_rank() == 0 else Quiet()\n"
                "    def run(self, losses):\n        for loss in losses:\n            self.reporter.end_step(loss)",
                expected_message="self.reporter.end_step() runs a collective only on ranks where 'dist.get_rank() == 0'"
                " is true: it is a Reporter there, whose end_step() calls dist.all_reduce() (case.py:11), and a Quiet "
                "elsewhere, whose end_step() runs none, so the other ranks never join it and every rank hangs until "
                "the timeout", range=(12, 13, 12, 41)),
        # Items sorted by counts of each rank's own records: one order per rank.
        Invalid("class TaskStats:\n    def __init__(self):\n        self.seen = Counter()\n        self.sums = {}\n"
                "    def update(self, task):\n        self.seen[task] += 1\n    def sync(self):\n"
                "        for task in sorted(self.sums, key=lambda t: self.seen[t], reverse=True):\n"
                "            dist.all_reduce(self.sums[task])\ndef main(records):\n    stats = TaskStats()\n"
                "    for task in records[rank::2]:\n        stats.update(task)\n    stats.sync()",
                expected_message="all_reduce() runs in a different order on different ranks: the loop at line 16 "
                "iterates over 'sorted(self.sums, key=lambda t: self.seen[t], reverse=True)' (it is sorted by a key "
                "that differs between ranks (line 21 passes 'task', and it holds the data of the rank it was "
                "given)), so each rank's calls pair with other items' calls (a size mismatch aborts, equal sizes mix "
                "the values silently)", range=(9, 13, 9, 45)),
        Invalid("def f(records, sums):\n    seen = Counter(records[rank::2])\n    for task, _ in seen.most_common():\n"
                "        dist.all_reduce(sums[task])",
                expected_message="all_reduce() runs in a different order on different ranks: the loop at line 11 "
                "iterates over 'seen.most_common()' (it is sorted by a key that differs between ranks (it is computed "
                "from the rank)), so each rank's calls pair with other items' calls (a size mismatch aborts, equal "
                "sizes mix the values silently)", range=(4, 9, 4, 36)),
        # A set of names iterates in an order salted per process.
        Invalid("def f(params):\n    names = set(params)\n    for name in names:\n        dist.all_reduce(params[name])",
                expected_message="all_reduce() runs in a different order on different ranks: the loop at line 11 "
                "iterates over 'names' (a set of strings or objects iterates in an order salted per process "
                "(PYTHONHASHSEED)), so each rank's calls pair with other items' calls (a size mismatch aborts, "
                "equal sizes mix the values silently)", range=(4, 9, 4, 38)),
        Invalid("for shard in shards[rank::world_size]:\n    dist.all_reduce(shard)",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop at line 9"
                " iterates over 'shards[rank::world_size]', whose length depends on the rank, so the "
                "ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(2, 5, 2, 27)),
        Invalid("for i in range(dist.get_rank(), len(items), 2):\n    dist.barrier()",
                expected_message="barrier() runs a different number of times on different ranks: the loop at line 9 "
                "iterates over 'range(dist.get_rank(), len(items), 2)', whose length depends on the "
                "rank, so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(2, 5, 2, 19)),
        # Group ranks: a test on the rank within the collective's own group, or a world collective.
        Invalid("def f(x, g):\n    if dist.get_rank(g) == 0:\n        dist.all_reduce(x, group=g)\n        log(x)",
                expected_message="all_reduce() runs only on ranks where 'dist.get_rank(g) == 0' is true: "
                "the other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run all_reduce (line 11) only, while the others run no collective"
                                 " here)", range=(3, 9, 3, 36)),
        Invalid("def f(x, g):\n    if dist.get_rank(g) == 0:\n        dist.reduce(x, 0, dist.ReduceOp.SUM, g)\n"
                "        log(x)",
                expected_message="reduce() runs only on ranks where 'dist.get_rank(g) == 0' is true: "
                "the other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run reduce (line 11) only, while the others run no collective"
                                 " here)", range=(3, 9, 3, 48)),
        Invalid("def f(x, g):\n    if g.rank() != 0:\n        return\n    dist.all_reduce(x, group=g)",
                expected_message="all_reduce() runs only on ranks where 'g.rank() == 0' is true: the "
                "other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run all_reduce (line 12) only, while the others run no collective"
                                 " here)", range=(4, 5, 4, 32)),
        Invalid("def f(x):\n    if mpu.get_pipeline_model_parallel_rank() == 0:\n"
                "        dist.all_reduce(x, group=mpu.get_pipeline_model_parallel_group())\n        log(x)",
                expected_message="all_reduce() runs only on ranks where "
                "'mpu.get_pipeline_model_parallel_rank() == 0' is true: the other ranks never join it and "
                "every rank hangs until the timeout"
                                 " (those ranks run all_reduce (line 11) only, while the others run no collective"
                                 " here)", range=(3, 9, 3, 74)),
        Invalid("def f(x):\n    tp_rank = get_tensor_model_parallel_rank()\n    if tp_rank == 0:\n"
                "        dist.barrier()\n        log(x)",
                expected_message="barrier() runs only on ranks where 'tp_rank == 0' is true: the other "
                "ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run barrier (line 12) only, while the others run no collective"
                                 " here)", range=(4, 9, 4, 23)),
        Invalid("x = torch.zeros(3)\nif accelerator.is_main_process:\n    x = torch.randn(3)\n"
                "    dist.broadcast(x, 0)",
                expected_message="broadcast() runs only on ranks where 'accelerator.is_main_process' is "
                "true: the other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run broadcast (line 12) only, while the others run no collective here)",
                range=(4, 5, 4, 25),
                expected_replacement="x = torch.zeros(3)\nif accelerator.is_main_process:\n"
                "    x = torch.randn(3)\ndist.broadcast(x, 0)"),
        Invalid("x = torch.zeros(3)\nif rank == 0:\n    dist.all_reduce(x)\nelse:\n    print(x)",
                expected_message="all_reduce() runs only on ranks where 'rank == 0' is true: the other "
                "ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run all_reduce (line 11) only, while the others run no collective"
                                 " here)", range=(3, 5, 3, 23),
                expected_replacement="x = torch.zeros(3)\nif rank == 0:\n    pass\nelse:\n"
                "    print(x)\ndist.all_reduce(x)"),
        Invalid("if accelerator.is_main_process:\n    y = torch.randn(3)\n    dist.broadcast(y, 0)",
                expected_message="broadcast() runs only on ranks where 'accelerator.is_main_process' is "
                "true: the other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run broadcast (line 11) only, while the others run no collective here)",
                range=(3, 5, 3, 25)),
        Invalid("def evaluate(loss):\n    if not accelerator.is_main_process:\n        return\n"
                "    return accelerator.gather(loss)",
                expected_message="gather() runs only on ranks where 'accelerator.is_main_process' is "
                "true: the other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run gather (line 12) only, while the others run no collective here)",
                range=(4, 12, 4, 36)),
        Invalid("for batch in range(3):\n    if local_rank != 0:\n        continue\n    dist.barrier()",
                expected_message="barrier() runs only on ranks where 'local_rank == 0' is true: the other "
                "ranks never join it and every rank hangs until the timeout", range=(4, 5, 4, 19)),
        Invalid("@accelerator.on_main_process\ndef log(metrics):\n"
                "    return accelerator.gather_for_metrics(metrics)",
                expected_message="gather_for_metrics() is called in 'log', which "
                "@accelerator.on_main_process runs on some ranks only: the other ranks never join it and "
                "every rank hangs until the timeout", range=(3, 12, 3, 51)),
        Invalid("def main_only(fn):\n    def wrapper(*args):\n        if dist.get_rank() == 0:\n"
                "            return fn(*args)\n    return wrapper\n@main_only\ndef log(x):\n    dist.all_reduce(x)",
                expected_message="all_reduce() is called in 'log', which @main_only runs on some ranks only: the "
                "other ranks never join it and every rank hangs until the timeout", range=(8, 5, 8, 23)),
        Invalid("import mmengine.dist as mdist\ndef f(x):\n    if mdist.is_main_process():\n        dist.all_reduce(x)",
                expected_message="all_reduce() runs only on ranks where 'mdist.is_main_process()' is true: the other "
                "ranks never join it and every rank hangs until the timeout (those ranks run all_reduce (line 12) "
                "only, while the others run no collective here)", range=(4, 9, 4, 27),
                expected_replacement="import mmengine.dist as mdist\ndef f(x):\n    if mdist.is_main_process():\n"
                "        pass\n    dist.all_reduce(x)"),
        Invalid("from mmengine.dist import master_only\ndef reduce_stats(x):\n    dist.all_reduce(x)\n    return x\n"
                "@master_only\ndef log(x):\n    print(reduce_stats(x))",
                expected_message="reduce_stats() is called in 'log', which @master_only runs on some ranks only: the "
                "other ranks never join it and every rank hangs until the timeout", range=(7, 11, 7, 26)),
        Invalid("with accelerator.main_process_first():\n    ids = torch.zeros(3)\n    ids = broadcast(ids)",
                expected_message="broadcast() is called inside 'with accelerator.main_process_first():': "
                "the main rank runs it while the others wait at the block's barrier, and every rank hangs "
                "until the timeout", range=(3, 11, 3, 25)),
        Invalid("x = torch.zeros(3)\nif accelerator.is_main_process:\n    dist.broadcast(x, 0)\n"
                "dist.broadcast(x, 0)",
                expected_message="broadcast() runs only on ranks where 'accelerator.is_main_process' is "
                "true: the other ranks never join it and every rank hangs until the timeout"
                                 " (those ranks run broadcast (line 11) then broadcast (line 12), while the others run "
                                 "broadcast (line 12) only)",
                range=(3, 5, 3, 25),
                expected_replacement="x = torch.zeros(3)\nif accelerator.is_main_process:\n    pass\n"
                "dist.broadcast(x, 0)\ndist.broadcast(x, 0)"),
        Invalid("def f(model, loader):\n    for x, y in loader:\n        loss = model(x, y)\n        if torch.isnan(loss):\n"
                "            continue\n        dist.all_reduce(loss)",
                expected_message="all_reduce() is skipped on ranks where 'torch.isnan(loss)' is true (it is computed "
                "from this rank's own batch of data): the 'continue' at line 13 is taken only there, while the other "
                "ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(6, 9, 6, 30)),
        Invalid("def f(model, val_loader, best, patience):\n    bad = 0\n    for epoch in range(10):\n"
                "        for x in val_loader:\n            val = model(x).item()\n        if val < best:\n"
                "            best, bad = val, 0\n        else:\n            bad += 1\n        if bad >= patience:\n"
                "            break\n        dist.barrier()",
                expected_message="barrier() is skipped in the following iterations on ranks where 'bad >= patience' is "
                "true (it is set under a condition that differs between ranks): the 'break' at line 19 is taken only "
                "there, while the other ranks go on calling it, so the ranks' calls stop pairing up and every rank "
                "hangs until the timeout", range=(12, 9, 12, 23)),
        Invalid("def f(model, x, best):\n    for epoch in range(6):\n        dist.all_reduce(x)\n"
                "        if dist.get_rank() == 0:\n            val_loss = model.evaluate()\n        else:\n"
                "            val_loss = float('inf')\n        if val_loss > best:\n            break",
                expected_message="all_reduce() is skipped in the following iterations on ranks where 'val_loss > best' "
                "is true (it is computed on some ranks and set to 'float('inf')' on the others): the 'break' at line 17 "
                "is taken only there, while the other ranks go on calling it, so the ranks' calls stop pairing up and "
                "every rank hangs until the timeout", range=(3, 9, 3, 27)),
        Invalid("def f(model, loader):\n    batch = next(iter(loader))\n    if batch.sum() > 0:\n        dist.barrier()",
                expected_message="barrier() runs only on ranks where 'batch.sum() > 0' is true (it is computed from "
                "this rank's own batch of data): the other ranks never join it and every rank hangs until the "
                "timeout"
                " (those ranks run barrier (line 12) only, while the others run no collective here)",
                range=(4, 9, 4, 23)),
        # A property that returns a rank test, and a module function that does, around a helper.
        Invalid("class T:\n    @property\n    def is_main(self):\n        return self.rank == 0\n"
                "    def sync(self, x):\n        dist.all_reduce(x)\n    def f(self, x):\n        if self.is_main:\n"
                "            self.sync(x)",
                expected_message="sync() runs only on ranks where 'self.is_main' is true: sync() calls "
                "dist.all_reduce() (case.py:14), and the other ranks never join it and every rank hangs until the "
                "timeout"
                " (those ranks run sync (line 17) only, while the others run no collective here)", range=(9, 13, 9, 25),
                expected_replacement="class T:\n    @property\n    def is_main(self):\n        return self.rank == 0\n"
                "    def sync(self, x):\n        dist.all_reduce(x)\n    def f(self, x):\n        if self.is_main:\n"
                "            pass\n        self.sync(x)"),
        Invalid("def f(x):\n    if dist.get_rank() == dist.get_world_size() - 1:\n        dist.all_reduce(x)",
                expected_message="all_reduce() runs only on ranks where 'dist.get_rank() == dist.get_world_size() - 1' "
                "is true: the other ranks never join it and every rank hangs until the timeout (those ranks run "
                "all_reduce (line 11) only, while the others run no collective here)", range=(3, 9, 3, 27),
                expected_replacement="def f(x):\n    if dist.get_rank() == dist.get_world_size() - 1:\n        pass\n"
                "    dist.all_reduce(x)"),
        Invalid("class Meter:\n    def sync_stats(self, x):\n        dist.all_reduce(x)\n"
                "def f(x):\n    meter = Meter()\n    if rank == 0:\n        meter.sync_stats(x)",
                expected_message="sync_stats() runs only on ranks where 'rank == 0' is true: sync_stats() calls "
                "dist.all_reduce() (case.py:11), and the other ranks never join it and every rank hangs until the "
                "timeout (those ranks run sync_stats (line 15) only, while the others run no collective here)",
                range=(7, 9, 7, 28),
                expected_replacement="class Meter:\n    def sync_stats(self, x):\n        dist.all_reduce(x)\n"
                "def f(x):\n    meter = Meter()\n    if rank == 0:\n        pass\n    meter.sync_stats(x)"),
        Invalid("def f(model, loader):\n    for batch in loader:\n        try:\n            loss = model(batch)\n"
                "        except ValueError:\n            continue\n        dist.all_reduce(loss)",
                expected_message="all_reduce() is skipped on ranks where the 'try' at line 11 raises (work in the "
                "'try' block can fail on some ranks only): the 'continue' at line 14 is taken only there, while "
                "the other ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs until "
                "the timeout", range=(7, 9, 7, 30)),
        Invalid("def f(x):\n    def on_main():\n        return accelerator.process_index == 0\n    if on_main():\n"
                "        dist.all_reduce(x)",
                expected_message="all_reduce() runs only on ranks where 'on_main()' is true: the other ranks "
                "never join it and every rank hangs until the timeout (those ranks run all_reduce (line 13) only, "
                "while the others run no collective here)", range=(5, 9, 5, 27),
                expected_replacement="def f(x):\n    def on_main():\n        return accelerator.process_index == 0\n"
                "    if on_main():\n        pass\n    dist.all_reduce(x)"),
        Invalid("def f(cfg, x):\n    if cfg.is_main:\n        dist.all_reduce(x)\ndef main(cfg, x):\n"
                "    cfg.is_main = dist.get_rank() == 0\n    f(cfg, x)",
                expected_message="all_reduce() runs only on ranks where 'cfg.is_main' is true: the other ranks "
                "never join it and every rank hangs until the timeout"
                " (those ranks run all_reduce (line 11) only, while the others run no collective here)",
                range=(3, 9, 3, 27),
                expected_replacement="def f(cfg, x):\n    if cfg.is_main:\n        pass\n    dist.all_reduce(x)\n"
                "def main(cfg, x):\n    cfg.is_main = dist.get_rank() == 0\n    f(cfg, x)"),
        Invalid("def is_main():\n    return dist.get_rank() == 0\ndef sync(x):\n    dist.all_reduce(x)\n"
                "def f(x):\n    if is_main():\n        sync(x)",
                expected_message="sync() runs only on ranks where 'is_main()' is true: sync() calls "
                "dist.all_reduce() (case.py:12), and the other ranks never join it and every rank hangs until the "
                "timeout"
                " (those ranks run sync (line 15) only, while the others run no collective here)", range=(7, 9, 7, 16),
                expected_replacement="def is_main():\n    return dist.get_rank() == 0\ndef sync(x):\n    dist.all_reduce(x)\n"
                "def f(x):\n    if is_main():\n        pass\n    sync(x)"),
        # A helper's placeholder off the main process decides an early return.
        Invalid("def evaluate(model):\n    if dist.get_rank() != 0:\n        return {}\n    return {'loss': model()}\n"
                "def f(model, x):\n    metrics = evaluate(model)\n    if 'loss' not in metrics:\n        return\n"
                "    dist.all_reduce(x)",
                expected_message="all_reduce() is skipped on ranks where ''loss' not in metrics' is true ('evaluate()' "
                "returns something else on some ranks): the 'return' at line 16 is taken only there, while the other "
                "ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs until the timeout "
                "(those ranks run no collective here, while the others run all_reduce (line 17) only)",
                range=(9, 5, 9, 23)),
        # ... and reaches a method of an object made inline as its argument.
        Invalid("class Hook:\n    def after_eval(self, metrics):\n        if metrics.get('loss') is None:\n"
                "            return\n        dist.barrier()\n"
                "def evaluate(model):\n    if dist.get_rank() != 0:\n        return {}\n    return {'loss': model()}\n"
                "def f(model):\n    Hook().after_eval(evaluate(model))",
                expected_message="barrier() runs only where 'metrics.get('loss') is None' is false: after_eval() "
                "returns before it otherwise, and its call at line 19 passes 'evaluate(model)' as 'metrics', which "
                "can differ between ranks ('evaluate()' returns something else on some ranks), so the ranks' calls "
                "stop pairing up and every rank hangs until the timeout", range=(5, 9, 5, 23)),
        # Save-on-crash: only the rank whose work raised enters the handler.
        Invalid("class Runner:\n    def train(self, loader):\n        for batch in loader:\n"
                "            dist.all_reduce(batch)\n    def save(self):\n        dist.barrier()\n"
                "    def run(self, loader):\n        try:\n            self.train(loader)\n        except RuntimeError:\n"
                "            self.save()\n            raise",
                expected_message="save() runs only on the ranks where the 'try' at line 16 raises (an exception comes "
                "from one rank's own data, memory or files): save() calls dist.barrier() (case.py:14), and the other "
                "ranks never join it and every rank hangs until the timeout (those ranks run train (line 17) then "
                "save (line 19), while the others run train (line 17) only)", range=(11, 13, 11, 24)),
        # A flag the module sets from a rank test, read in another function.
        Invalid("class Loop:\n    def evaluate(self, x):\n        return accelerator.gather_for_metrics(x)\n"
                "    def run(self, cfg, x):\n        if cfg.should_log:\n            print(self.evaluate(x))\n"
                "def main(cfg):\n    cfg.should_log = accelerator.is_main_process and cfg.report_to != 'none'\n"
                "    Loop().run(cfg, torch.ones(1))",
                expected_message="evaluate() runs only on ranks where 'cfg.should_log' is true: evaluate() calls "
                "accelerator.gather_for_metrics() (case.py:11), and the other ranks never join it and every rank "
                "hangs until the timeout (those ranks run evaluate (line 14) only, while the others run no "
                "collective here)", range=(6, 19, 6, 35)),
        # The flag is set on rank 0 only: on the method's next call rank 0 returns before the barrier.
        Invalid("""
            class Saver:
                def __init__(self):
                    self.saved = False
                def save(self, state):
                    if self.saved:
                        return
                    dist.barrier()
                    if dist.get_rank() == 0:
                        torch.save(state, 'ckpt')
                        self.saved = True
            """, expected_message="barrier() is skipped on ranks where 'self.saved' is true (it is set under a "
                "condition that differs between ranks): the 'return' at line 14 is taken only there, while the "
                "other ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout (those ranks run no collective here, while the others run barrier (line 15) only)",
                range=(7, 9, 7, 23)),
        # The exit's barrier runs only where the body raised nothing, and the body parses a rank's own
        # shard in a try whose handler goes on.
        Invalid("""
            import json
            class Stage:
                def __init__(self, accelerator):
                    self.accelerator = accelerator
                def __enter__(self):
                    return self
                def __exit__(self, exc_type, exc, tb):
                    if exc_type is None:
                        self.accelerator.wait_for_everyone()
            def export(accelerator, shards):
                for shard in shards[accelerator.process_index::accelerator.num_processes]:
                    try:
                        with Stage(accelerator):
                            values = [json.loads(line) for line in shard]
                    except ValueError:
                        continue
            """, expected_message="wait_for_everyone() runs in Stage.__exit__ only where 'exc_type is None' holds, "
                "that is where the 'with' body raised nothing, and the 'with' at line 21 is in a 'try' whose handler "
                "goes on while work in the 'try' block can fail on some ranks only: the ranks that failed skip it, so "
                "the ranks' calls stop pairing up and every rank hangs until the timeout", range=(9, 13, 9, 49)),
        # The logging level is set by a test on the rank: INFO prints on rank 0 only, and the metric
        # handed to train() all-reduces when it is computed for the message.
        Invalid("""
            import logging
            log = logging.getLogger("train")
            class Mean:
                def compute(self):
                    dist.all_reduce(self.total)
                    return self.total
            def setup():
                quiet = dist.get_rank() != 0
                logging.basicConfig(level=logging.WARNING if quiet else logging.INFO)
            def train(metric, steps):
                for step in range(steps):
                    if log.isEnabledFor(logging.INFO):
                        log.info("step %d: %s", step, metric.compute())
            def main():
                setup()
                train(Mean(), 4)
            """, expected_message="compute() runs only on ranks where 'log.isEnabledFor(logging.INFO)' is true (the "
                "logging level is set by a test on the rank at line 17): compute() calls dist.all_reduce() "
                "(case.py:13), and the other ranks never join it and every rank hangs until the timeout",
                range=(13, 43, 13, 59)),
        # logging formats its arguments only where the record is emitted, INFO on rank 0 only.
        Invalid("""
            import logging
            logger = logging.getLogger("train")
            class Peak:
                def __str__(self):
                    dist.all_reduce(self.value)
                    return str(self.value)
            def train(rank, steps):
                logger.setLevel(logging.INFO if rank == 0 else logging.WARNING)
                peak = Peak()
                for step in range(steps):
                    logger.info("step %d peak %s", step, peak)
            """, expected_message="logger.info() formats 'peak' only where the record is emitted, and formatting it "
                "calls dist.all_reduce() (case.py:13), while the logging level is set by a test on the rank at line "
                "16: only some ranks run it, and every rank hangs until the timeout", range=(11, 9, 11, 51)),
        # A checkpoint directory named after the rank, reached through a helper, a constructor and a
        # property: each rank checks its own file.
        Invalid("""
            import os
            from pathlib import Path
            def scratch():
                return Path("/scratch") / f"node_{os.environ['RANK']}"
            class Manager:
                def __init__(self, root):
                    self.root = root
                @property
                def state_path(self):
                    return self.root / "state.pt"
                def load(self):
                    if not self.state_path.exists():
                        return None
                    dist.barrier()
            def main():
                Manager(scratch() / "ckpt").load()
            """, expected_message="barrier() is skipped on ranks where 'self.state_path.exists()' is false (line 24 "
                "passes 'scratch() / \"ckpt\"', and 'scratch()' returns a name built from the rank): the 'return' at "
                "line 21 is taken only there, while the other ranks go on calling it, so the ranks' calls stop pairing "
                "up and every rank hangs until the timeout (those ranks run no collective here, while the others run "
                "barrier (line 22) only)", range=(14, 9, 14, 23)),
        # A disabled bar counts nothing: its `n` stays 0 off the main process.
        Invalid("""
            from tqdm.auto import tqdm
            def train(accelerator, loader, evaluate):
                bar = tqdm(range(len(loader)), disable=not accelerator.is_main_process)
                for batch in loader:
                    bar.update(1)
                    if bar.n % 100 == 0:
                        accelerator.gather(evaluate())
            """, expected_message="gather() runs only on ranks where 'bar.n % 100 == 0' is true (the progress bar is "
                "disabled on some ranks ('disable=not accelerator.is_main_process'), and counts nothing there): the "
                "other ranks never join it and every rank hangs until the timeout", range=(7, 13, 7, 43)),
        # A framework's methods named like a collective are collectives: Lightning's and Fabric's.
        Invalid("""
            import lightning as L
            class M(L.LightningModule):
                def on_validation_epoch_end(self):
                    if self.trainer.is_global_zero:
                        preds = self.all_gather(self.preds)
                        print(preds)
            """, expected_message="all_gather() runs only on ranks where 'self.trainer.is_global_zero' is true: the "
                "other ranks never join it and every rank hangs until the timeout (those ranks run all_gather (line "
                "13) only, while the others run no collective here)", range=(5, 21, 5, 48)),
        Invalid("""
            from lightning.fabric import Fabric
            fabric = Fabric(accelerator='cpu', devices=2)
            if fabric.global_rank == 0:
                fabric.barrier()
                print('passed')
            """, expected_message="barrier() runs only on ranks where 'fabric.global_rank == 0' is true: the other "
                "ranks never join it and every rank hangs until the timeout (those ranks run barrier (line 12) only, "
                "while the others run no collective here)", range=(4, 5, 4, 21)),
        # An environment variable set off the main process, read by a helper (starVLA#369).
        Invalid("""
            def enabled():
                mode = os.getenv('WANDB_MODE')
                return mode != 'disabled'
            def quiet():
                if not accelerator.is_main_process:
                    os.environ['WANDB_MODE'] = 'disabled'
            def main():
                quiet()
                if enabled():
                    accelerator.wait_for_everyone()
            """, expected_message="wait_for_everyone() runs only on ranks where 'enabled()' is true ('enabled()' "
                "returns something else on some ranks, as the environment variable WANDB_MODE is set by a test on "
                "the rank at line 14): the other ranks never join it and every rank hangs until the timeout (those "
                "ranks run wait_for_everyone (line 18) only, while the others run no collective here)",
                range=(10, 9, 10, 40)),
        Invalid("def f(token, done):\n    if rank == 0:\n        dist.broadcast(token, 0)\n        dist.all_reduce(done)\n"
                "    else:\n        dist.all_reduce(done)\n        dist.broadcast(token, 0)",
                expected_message=(
                "all_reduce() runs at another point on different ranks: on ranks where 'rank == 0' is false the "
                "branch at line 10 runs all_reduce (line 14) then broadcast (line 15), while the others run "
                "broadcast (line 11) then all_reduce (line 12): each call pairs with the others' call at the same "
                "point, a different collective or group, and every rank hangs until the timeout"),
                range=(6, 9, 6, 30)),
        # A module-level name computed from the rank, read in a function (the node's own scratch).
        Invalid("SCRATCH = f'/tmp/node{rank}'\ndef step(x):\n    if os.path.exists(SCRATCH + '/STOP'):\n"
                "        return\n    dist.all_reduce(x)",
                expected_message="all_reduce() is skipped on ranks where 'os.path.exists(SCRATCH + '/STOP')' is "
                "true (it checks a path named after the rank): the 'return' at line 12 is taken only there, while "
                "the other ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs until "
                "the timeout (those ranks run no collective here, while the others run all_reduce (line 13) only)",
                range=(5, 5, 5, 23)),
        # Prediction loaders are dealt unpadded (UnrepeatedDistributedSamplerWrapper).
        Invalid("import lightning as L\nclass M(L.LightningModule):\n    def predict_step(self, batch, batch_idx):\n"
                "        return self.all_gather(self.net(batch))",
                expected_message="all_gather() runs a different number of times on different ranks: Lightning "
                "calls 'predict_step' once per batch of the prediction loader, which it deals with "
                "UnrepeatedDistributedSamplerWrapper (lightning 2.6.6, trainer/connectors/data_connector.py:241): "
                "it does not pad, so the ranks hold different numbers of batches unless the rows divide evenly, "
                "so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(4, 16, 4, 48)),
        # An odd number of items dealt by rank is uneven for every even number of processes.
        Invalid("ROWS = 15\ndef f(x):\n    for i in range(dist.get_rank(), ROWS, dist.get_world_size()):\n"
                "        dist.all_reduce(x[i])",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop "
                "at line 11 iterates over 'range(dist.get_rank(), ROWS, dist.get_world_size())', whose length "
                "depends on the rank, so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(4, 9, 4, 30)),
        Invalid("LABELS = [0, 1, 0]\ndef f():\n    ds = TensorDataset(torch.randn(len(LABELS), 4), torch.tensor(LABELS))\n"
                "    for i in range(rank, len(ds), dist.get_world_size()):\n        dist.all_reduce(ds[i][0])",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop "
                "at line 12 iterates over 'range(rank, len(ds), dist.get_world_size())', whose length depends on "
                "the rank, so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(5, 9, 5, 34)),
        Invalid("ROWS = ['a', 'b', 'c']\ndef f():\n    for row in ROWS[rank::dist.get_world_size()]:\n"
                "        dist.barrier()",
                expected_message="barrier() runs a different number of times on different ranks: the loop at line "
                "11 iterates over 'ROWS[rank::dist.get_world_size()]', whose length depends on the rank, so the "
                "ranks' calls stop pairing up and every rank hangs until the timeout", range=(4, 9, 4, 23)),
        # A trainer's dispatch by name (`getattr(cb, hook)(...)`) reaches a callback's collective.
        Invalid("class Health:\n    def on_log(self, trainer, step):\n        dist.monitored_barrier()\n"
                "class Trainer:\n    def __init__(self, callbacks):\n        self.callbacks = callbacks\n"
                "    def fire(self, hook, **kwargs):\n        for cb in self.callbacks:\n"
                "            getattr(cb, hook)(self, **kwargs)\n    def fit(self):\n        for step in range(4):\n"
                "            if rank == 0:\n                self.fire('on_log', step=step)\n"
                "def main():\n    Trainer([Health()]).fit()",
                expected_message="fire() runs only on ranks where 'rank == 0' is true: fire() calls "
                "dist.monitored_barrier() (case.py:11), and the other ranks never join it and every rank hangs "
                "until the timeout", range=(13, 17, 13, 47),
                expected_replacement="class Health:\n    def on_log(self, trainer, step):\n        dist.monitored_barrier()\n"
                "class Trainer:\n    def __init__(self, callbacks):\n        self.callbacks = callbacks\n"
                "    def fire(self, hook, **kwargs):\n        for cb in self.callbacks:\n"
                "            getattr(cb, hook)(self, **kwargs)\n    def fit(self):\n        for step in range(4):\n"
                "            if rank == 0:\n                pass\n            self.fire('on_log', step=step)\n"
                "def main():\n    Trainer([Health()]).fit()"),
        Invalid("GROUPS = {}\ndef sync_stats(x):\n    dist.all_reduce(x, group=GROUPS['stats'])\n"
                "def sync_grads(y):\n    dist.all_reduce(y, group=GROUPS['grads'])\n"
                "def f(x, y, lengths):\n    if lengths[rank] > 4:\n        sync_stats(x)\n        sync_grads(y)\n"
                "    else:\n        sync_grads(y)\n        sync_stats(x)",
                expected_message="sync_grads() runs at another point on different ranks: on ranks where "
                "'lengths[rank] > 4' is false the branch at line 15 runs sync_grads (line 19) then sync_stats "
                "(line 20), while the others run sync_stats (line 16) then sync_grads (line 17): each call pairs "
                "with the others' call at the same point, a different collective or group, and every rank hangs "
                "until the timeout", range=(11, 9, 11, 22)),
        Invalid("def f(shard):\n    kept = []\n    for row in shard[rank::2]:\n        if row.any():\n"
                "            kept.append(row)\n    if not kept:\n        return\n    dist.all_reduce(torch.cat(kept).sum())",
                expected_message=(
                "all_reduce() is skipped on ranks where 'kept' is false (it is set under a condition that differs "
                "between ranks): the 'return' at line 15 is taken only there, while the other ranks go on calling "
                "it, so the ranks' calls stop pairing up and every rank hangs until the timeout (those ranks run no "
                "collective here, while the others run all_reduce (line 16) only)"),
                range=(8, 5, 8, 43)),
        Invalid("def score(r):\n    out = {'id': r}\n    if r < 0:\n        out['fix'] = lambda t: t\n    return out\n"
                "def f(shard):\n    rows = [score(r) for r in shard[rank::2]]\n    try:\n"
                "        out = [None, None]\n        dist.all_gather_object(out, rows)\n    except Exception:\n"
                "        out = [rows]",
                expected_message=(
                "all_gather_object() pickles 'rows' on each rank before it joins the others, and what it holds "
                "differs between ranks ('score()' returns a value computed from the rank) and can include a lambda, "
                "which pickle rejects: the call raises on the ranks whose data holds one, and the handler of the "
                "'try' at line 16 goes on without it, so the ranks' calls stop pairing up and every rank hangs until "
                "the timeout"),
                range=(10, 9, 10, 42)),
        Invalid("import json\ndef step(line):\n    dist.all_reduce(torch.tensor(json.loads(line)))\n"
                "def f(records, seen):\n    try:\n        step(records[rank])\n    finally:\n        dist.all_reduce(seen)",
                expected_message=(
                "all_reduce() runs in the 'finally' of the 'try' at line 13, whose body runs step (line 14) on "
                "'records[rank]', which differs between ranks (it is computed from the rank): where that work raises "
                "on one rank, it runs this call at once while the others are still in the body's collectives, so the "
                "ranks' calls stop pairing up and every rank hangs until the timeout"),
                range=(8, 9, 8, 30)),
        # A running count of the rows each rank observed decides whether the next call syncs
        # (rsl_rl#226): the ranks observe different numbers of rows.
        Invalid("""
            import torch
            from accelerate import Accelerator
            class Norm:
                def __init__(self, accelerator):
                    self.accelerator, self.seen, self.frozen = accelerator, 0, False
                def observe(self, obs):
                    self.accelerator.reduce(obs.sum(0))
                    self.seen += len(obs)
                    self.frozen = self.seen >= 8
            def main(accelerator: Accelerator):
                norm = Norm(accelerator)
                for step in range(5):
                    obs = torch.randn(4 if accelerator.is_main_process else 2, 3)
                    if not norm.frozen:
                        norm.observe(obs)
            """, expected_message="observe() runs only on ranks where 'norm.frozen' is false (line 23 passes 'obs', "
                "and it is computed from the rank): observe() calls self.accelerator.reduce() (case.py:15), and "
                "the other ranks never join it and every rank hangs until the timeout", range=(15, 13, 15, 30)),
        # A script that never seeds Python's generator: each process draws its own (FastGen#34).
        Invalid("""
            import random
            def step(usage):
                if random.random() > 0.5:
                    dist.all_reduce(usage)
            if __name__ == "__main__":
                torch.manual_seed(0)
                step(torch.ones(1))
            """, expected_message="all_reduce() runs only on ranks where 'random.random() > 0.5' is true (it is "
                "drawn from a random generator the script never seeds, which each process seeds on its own): the "
                "other ranks never join it and every rank hangs until the timeout (those ranks run all_reduce "
                "(line 12) only, while the others run no collective here)",
                range=(4, 9, 4, 31)),
        # The same share cut to the count without repeating it: a shorter share stays shorter.
        Invalid("""
            import torch.distributed as dist
            def train(shards, model):
                rank, world = dist.get_rank(), dist.get_world_size()
                mine = shards[rank::world]
                per_rank = -(-len(shards) // world)
                mine = mine[:per_rank]
                for shard in mine:
                    dist.all_reduce(model(shard))
            """, expected_message="all_reduce() runs a different number of times on different ranks: the loop "
                "at line 15 iterates over 'mine', whose length can differ between ranks (each rank takes every "
                "world-th item from its rank on, and the shares differ by one item unless they divide evenly), so "
                "the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(8, 9, 8, 38)),
        # The same helper over an odd table: at two processes one rank gets a batch more.
        Invalid("""
            import torch.distributed as dist
            FILES = ["a", "b", "c", "d", "e"]
            def make_batches(rank, world):
                batches = []
                for name in FILES[rank::world]:
                    batches.append(load(name))
                return batches
            def main():
                rank, world = dist.get_rank(), dist.get_world_size()
                for batch in make_batches(rank, world):
                    dist.all_reduce(batch)
            """, expected_message="all_reduce() runs a different number of times on different ranks: the loop at "
                "line 18 iterates over 'make_batches(rank, world)', whose length can differ between ranks "
                "('make_batches()' returns something else on some ranks), so the ranks' calls stop pairing up and "
                "every rank hangs until the timeout", range=(11, 9, 11, 31)),
        # A helper returning its share of an odd table as a comprehension: as many items as the rank decides.
        Invalid("""
            import torch.distributed as dist
            FILES = ["a", "b", "c", "d", "e"]
            def make_batches(rank, world):
                return [load(name) for name in FILES[rank::world]]
            def main():
                rank, world = dist.get_rank(), dist.get_world_size()
                for batch in make_batches(rank, world):
                    dist.all_reduce(batch)
            """, expected_message="all_reduce() runs a different number of times on different ranks: the loop "
                "at line 15 iterates over 'make_batches(rank, world)', whose length can differ between ranks "
                "('make_batches()' returns something else on some ranks, as each rank takes every world-th item "
                "from its rank on, and the shares differ by one item unless they divide evenly), so the ranks' "
                "calls stop pairing up and every rank hangs until the timeout",
                range=(8, 9, 8, 31)),
        # A preview on the main process leaves the model in eval mode, where its norm layer stops
        # syncing (pytorch#72897).
        Invalid("""
            import torch.distributed as dist
            from torch import nn
            class CrossNorm(nn.Module):
                def forward(self, x):
                    if self.training:
                        dist.all_reduce(x)
                    return x
            def preview(model, x):
                model.eval()
                print(model(x))
            def train(model, loader, rank):
                model.train()
                for step, x in enumerate(loader):
                    model(x).sum().backward()
                    if rank == 0 and step == 2:
                        preview(model, x)
            """, expected_message="all_reduce() runs only on ranks where 'self.training' is true (line 24 puts the "
                "model in eval mode on some ranks only, and nothing sets it back before the next step): the other "
                "ranks never join it and every rank hangs until the timeout (those ranks run all_reduce (line 14) "
                "only, while the others run no collective here)", range=(6, 13, 6, 31)),
        # A cache every rank checks and the first to get there writes, with no rank word in the file:
        # the ranks that find it skip the barrier.
        Invalid("""
            import os
            import torch
            import torch.distributed as dist
            def prepare(cache_file, build):
                if not os.path.exists(cache_file):
                    torch.save(build(), cache_file)
                    dist.barrier()
                return torch.load(cache_file)
            """, expected_message="barrier() runs only on ranks where 'os.path.exists(cache_file)' is false (every "
                "rank checks a path that the branch then writes, and the first rank to write it changes what the "
                "others find): the other ranks never join it and every rank hangs until the timeout (those ranks run "
                "barrier (line 15) only, while the others run no collective here)", range=(7, 9, 7, 23)),
        # Accelerate told not to even the batches out: a loop over a prepared loader reduces once per
        # batch of the rank's own share.
        Invalid("""
            from accelerate import Accelerator
            from accelerate.utils import DataLoaderConfiguration
            from torch.utils.data import DataLoader
            def evaluate(model, data):
                accelerator = Accelerator(dataloader_config=DataLoaderConfiguration(even_batches=False))
                model, loader = accelerator.prepare(model, DataLoader(data, batch_size=2))
                for x, y in loader:
                    print(accelerator.reduce(model(x).mean()))
            """, expected_message="reduce() runs a different number of times on different ranks: the loop at line "
                "15 iterates over 'loader', whose length can differ between ranks ('accelerator' is made with "
                "even_batches off: each rank's loader keeps its own number of batches), so the ranks' calls stop "
                "pairing up and every rank hangs until the timeout", range=(8, 15, 8, 50)),
        # Each rank stops on the sum of its own validation batches, folded by a generator.
        Invalid("""
            def fit(model, train_loader, val_loader, opt):
                for epoch in range(100):
                    for batch in train_loader:
                        model(batch).sum().backward()
                        for p in model.parameters():
                            dist.all_reduce(p.grad)
                        opt.step()
                    val = sum(model(b).sum().item() for b in val_loader)
                    if val > 3.0:
                        break
            """, expected_message="all_reduce() is skipped in the following iterations on ranks where 'val > "
                "3.0' is true (it is computed from this rank's own batch of data): the 'break' at line 18 is "
                "taken only there, while the other ranks go on calling it, so the ranks' calls stop pairing up "
                "and every rank hangs until the timeout",
                range=(6, 17, 6, 40)),
        # A method of the module's own class that tests an attribute set from the rank, read in a test
        # through an object of the class (the cut keeps a method whose result a test reads).
        Invalid("""
            import torch.distributed as dist
            class Logger:
                def __init__(self, every):
                    self.every = every
                    self.enabled = dist.get_rank() == 0
                def due(self, step):
                    return self.enabled and step % self.every == 0
            def main(loader):
                logger = Logger(2)
                for step, x in enumerate(loader):
                    if logger.due(step):
                        dist.barrier()
            """, expected_message="barrier() runs only on ranks where 'logger.due(step)' is true ('logger.due()' "
                "returns a value computed from the rank): the other ranks never join it and every rank hangs until "
                "the timeout", range=(12, 13, 12, 27)),
        # An iterable dataset that deals the lines by rank: each rank's loader ends after its share.
        Invalid("""
            import itertools
            from torch.utils.data import DataLoader, IterableDataset
            class Lines(IterableDataset):
                def __init__(self, path):
                    self.path = path
                def __iter__(self):
                    with open(self.path) as f:
                        yield from itertools.islice(f, dist.get_rank(), None, dist.get_world_size())
            def train(model, path):
                for batch in DataLoader(Lines(path), batch_size=4):
                    model(batch).sum().backward()
                    for p in model.parameters():
                        dist.all_reduce(p.grad)
            """, expected_message="all_reduce() runs a different number of times on different ranks: the loop "
                "at line 18 iterates over 'DataLoader(Lines(path), batch_size=4)', whose length can differ "
                "between ranks (each rank takes its own share of the items, and the shares differ in length "
                "unless they divide evenly), so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout",
                range=(13, 13, 13, 36)),
        # The main process moves its checkpoint into place; the others check for it before any
        # collective has made them wait for the write (the barrier at the end comes too late).
        Invalid("""
            import os
            from accelerate import Accelerator
            BEST = "/shared/best.pt"
            def recalibrate(model, accelerator):
                return accelerator.reduce(model.weight, reduction="mean")
            def main():
                accelerator = Accelerator()
                model = build()
                @accelerator.on_main_process
                def save_best(state):
                    torch.save(state, BEST + ".tmp")
                    os.replace(BEST + ".tmp", BEST)
                save_best(model.state_dict())
                if os.path.isfile(BEST):
                    recalibrate(model, accelerator)
                accelerator.wait_for_everyone()
            """, expected_message="recalibrate() runs only on ranks where 'os.path.isfile(BEST)' is true (it "
                "checks a file that only some ranks write (line 20): a rank on another node, or whose file system "
                "does not show the new file yet, finds something else): recalibrate() calls accelerator.reduce() "
                "(case.py:13), and the other ranks never join it and every rank hangs until the timeout (those "
                "ranks run recalibrate (line 23) then wait_for_everyone (line 24), while the others run "
                "wait_for_everyone (line 24) only)",
                range=(15, 9, 15, 40)),
        # Every rank makes the same directory without exist_ok: all but the first raise.
        Invalid("""
            import os
            def export(preds, rank):
                os.makedirs("/shared/preds")
                torch.save(preds, f"/shared/preds/{rank}.pt")
                dist.barrier()
            """, expected_message="os.makedirs() of \"/shared/preds\" runs on every rank, and the path is the "
                "same on each: the first rank to get there wins and every other rank raises FileExistsError, so "
                "barrier() (line 13) waits for ranks that are gone and hangs until the timeout",
                range=(3, 5, 3, 33)),
        # The same, in a helper that makes the directory its caller names (allennlp#3841).
        Invalid("""
            import os
            from pathlib import Path
            def export(preds, out_dir, rank):
                Path(out_dir).mkdir(parents=True)
                torch.save(preds, os.path.join(out_dir, f"{rank}.pt"))
            def main(preds, rank):
                export(preds, "/shared/preds", rank)
                dist.barrier()
            """, expected_message="Path(out_dir).mkdir() of \"/shared/preds\" (in export(), line 12) runs on "
                "every rank, and the path is the same on each: the first rank to get there wins and every other "
                "rank raises FileExistsError, so barrier() (line 16) waits for ranks that are gone and hangs "
                "until the timeout",
                range=(7, 5, 7, 41)),
        # Every rank rotates the old checkpoints of a shared directory (transformers#20988).
        Invalid("""
            import shutil
            def train(model, loader, opt, root, keep):
                for step, batch in enumerate(loader):
                    loss = accelerator.reduce(model(batch).sum())
                    opt.step()
                    if step % 100 == 0:
                        for old in sorted(os.listdir(root))[:-keep]:
                            shutil.rmtree(os.path.join(root, old))
            """, expected_message="shutil.rmtree() of 'os.path.join(root, old)' runs on every rank, and the "
                "path is the same on each: the first rank to get there wins and every other rank raises "
                "FileNotFoundError, so reduce() (line 12) waits for ranks that are gone and hangs until the "
                "timeout",
                range=(8, 17, 8, 55)),
        # The main process runs the block first and builds the cache; the others find it built.
        Invalid("""
            def features(path, x):
                with accelerator.main_process_first():
                    built = not os.path.exists(path)
                    if built:
                        torch.save(x.mean(0), path)
                if built:
                    return accelerator.reduce(x.mean(0), reduction="mean")
                return torch.load(path)
            """, expected_message="reduce() runs only on ranks where 'built' is true (it checks the file system "
                "inside 'accelerator.main_process_first()', where the ranks take turns: the first finds what was "
                "there before, the others what it left): the other ranks never join it and every rank hangs until "
                "the timeout (those ranks run reduce (line 15) only, while the others run no collective here)",
                range=(7, 16, 7, 63)),
        # The stopper is fed in a hook that runs on the main process only (speechbrain#1939).
        Invalid("""
            def fit(model, loader):
                stopper = EarlyStopper(patience=2)
                @accelerator.on_main_process
                def on_valid_end(loss):
                    print(loss)
                    stopper.update(loss)
                for epoch in range(10):
                    losses = [accelerator.gather_for_metrics(model(b)) for b in loader]
                    on_valid_end(torch.cat(losses).mean().item())
                    if stopper.should_stop():
                        break
            """, expected_message="gather_for_metrics() is skipped in the following iterations on ranks where "
                "'stopper.should_stop()' is true ('on_valid_end()' changes it on one process only "
                "(@on_main_process)): the 'break' at line 19 is taken only there, while the other ranks go on "
                "calling it, so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(8, 19, 8, 59)),
        Invalid(_LAZY_SEED, expected_message="self.seed runs only where 'flags.all()' is false: inject() returns before it "
                "otherwise, and its call at line 24 passes 'flags' as 'flags', which can differ between ranks (it "
                "is computed from this rank's own batch of data), so the ranks' calls stop pairing up and every "
                "rank hangs until the timeout",
                range=(12, 85, 12, 94)),
        # The collective is what the function returns, after a return taken where the rank's own batches fail.
        Invalid("def evaluate(model, loader):\n    total = torch.zeros(1)\n    try:\n        for batch in loader:\n"
                "            total += model(batch).sum()\n    except RuntimeError:\n        return None\n"
                "    return accelerator.reduce(total)",
                expected_message="reduce() is skipped on ranks where the 'try' at line 11 raises (work in the "
                "'try' block can fail on some ranks only): the 'return' at line 15 is taken only there, while the "
                "other ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout (those ranks run no collective here, while the others run reduce (line 16) only)",
                range=(8, 12, 8, 37)),
        # Every rank claims the same trigger file by moving it: one wins, the others' handlers return.
        Invalid("def claim(trigger):\n    try:\n        os.rename(trigger, trigger + '.handled')\n"
                "    except FileNotFoundError:\n        return\n    dist.barrier()",
                expected_message="barrier() is skipped on ranks where the 'try' at line 10 raises (every rank "
                "creates, removes or moves the same path, and all but the first to do so raise): the 'return' at "
                "line 13 is taken only there, while the other ranks go on calling it, so the ranks' calls stop "
                "pairing up and every rank hangs until the timeout (those ranks run no collective here, while the "
                "others run barrier (line 14) only)",
                range=(6, 5, 6, 19)),
        # The items of each rank's own entry differ in length from the other entries' items.
        Invalid("SEQS = {0: [[1.0] * 3, [2.0, 3.0, 4.0, 5.0]], 1: [[1.0, 2.0, 3.0], [4.0]]}\n"
                "def f():\n    for seq in SEQS[rank]:\n        if len(seq) > 2:\n            dist.barrier()",
                expected_message="barrier() runs only on ranks where 'len(seq) > 2' is true (each rank "
                "iterates its own entry of a table whose entries hold items of other lengths): the other ranks "
                "never join it and every rank hangs until the timeout",
                range=(5, 13, 5, 27)),
        Invalid("SEQS = {0: [[0.1 * i for i in range(9)], [0.2]], 1: [[0.3, 0.1], [0.2]]}\n"
                "def split_long(tokens):\n    dist.all_reduce(tokens)\n"
                "def f():\n    mine = SEQS[rank]\n    for values in mine:\n        tokens = torch.tensor(values)\n"
                "        if len(tokens) > 6:\n            split_long(tokens)",
                expected_message="split_long() runs only on ranks where 'len(tokens) > 6' is true (each rank "
                "iterates its own entry of a table whose entries hold items of other lengths): split_long() calls "
                "dist.all_reduce() (case.py:11), and the other ranks never join it and every rank hangs until the "
                "timeout",
                range=(9, 13, 9, 31)),
        # A Trainer subclass whose loader packs each rank's own share: the steps differ in number.
        Invalid("""
            from torch.utils.data import DataLoader
            from transformers import Trainer
            def pack(sequences, capacity):
                rows, current = [], []
                for seq in sequences:
                    if current and sum(len(s) for s in current) + len(seq) > capacity:
                        rows.append(current)
                        current = []
                    current.append(seq)
                if current:
                    rows.append(current)
                return rows
            class PackingTrainer(Trainer):
                def get_train_dataloader(self):
                    world = dist.get_world_size()
                    rows = pack(self.train_dataset[rank::world], 32)
                    return DataLoader(rows, batch_size=1)
            def main(model, data):
                PackingTrainer(model=model, train_dataset=data).train()
            """, expected_message="get_train_dataloader() returns a loader whose length can differ between "
                "ranks (it holds the data of the rank it was given), and Trainer.train() runs one training step "
                "per batch of it, with DDP's gradient all-reduce in the backward (transformers 5.25.0, "
                "trainer.py:1612 iterates the loader as returned), so the ranks' calls stop pairing up and every "
                "rank hangs until the timeout",
                range=(17, 16, 17, 46)),
        # Per-parameter gradient hooks that all-reduce, and a head the forward runs only for some batches.
        Invalid("""
            class Detector(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.trunk = torch.nn.Linear(8, 8)
                    self.box = torch.nn.Linear(8, 4)
                def forward(self, x, has_box):
                    h = self.trunk(x)
                    if has_box.any():
                        h = h + self.box(h[has_box]).mean()
                    return h.sum()
            def sync(p):
                dist.all_reduce(p.grad)
            def train(batches):
                model = Detector()
                for p in model.parameters():
                    p.register_post_accumulate_grad_hook(sync)
                for x, has_box in batches:
                    model(x, has_box).backward()
            """, expected_message="all_reduce() runs in 'sync', a gradient hook registered on each parameter "
                "(line 24), once per parameter that gets a gradient, and self.box() runs only where "
                "'has_box.any()' holds, which differs between ranks with their data: a rank whose step skips it "
                "runs the hook fewer times, so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout",
                range=(12, 5, 12, 28)),
        # ... or that the training code runs only where the rank's batch has depth targets.
        Invalid("""
            class Net(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.trunk = torch.nn.Linear(6, 8)
                    self.depth_head = torch.nn.Linear(8, 1)
                def forward(self, x):
                    return self.trunk(x)
            def average(grad):
                dist.all_reduce(grad)
                return grad
            DEPTH = [True, False, True, True]
            def train():
                model = Net()
                for p in model.parameters():
                    p.register_hook(average)
                for has_depth in DEPTH[rank::dist.get_world_size()]:
                    h = model(torch.randn(4, 6))
                    loss = h.sum()
                    if has_depth:
                        loss = loss + model.depth_head(h).sum()
                    loss.backward()
            """, expected_message="all_reduce() runs in 'average', a gradient hook registered on each parameter "
                "(line 23), once per parameter that gets a gradient, and model.depth_head() runs only where "
                "'has_depth' holds, which differs between ranks with their data: a rank whose step skips it runs "
                "the hook fewer times, so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(9, 5, 9, 26)),
        # Every process of the job must enter new_group, members or not (groups are numbered by each
        # process's count of calls).
        Invalid("def f():\n    if rank == 0:\n        group = dist.new_group([0, 1])\n        return group",
                expected_message="new_group() runs only on ranks where 'rank == 0' is true: the other ranks "
                "never join it and every rank hangs until the timeout (those ranks run new_group (line 11) only, "
                "while the others run no collective here)",
                range=(3, 17, 3, 39)),
        # A slice object of the rank's own rows, then a helper that leaves early on that share.
        Invalid("def score(preds):\n    valid = ~torch.isnan(preds)\n    if not valid.any():\n        return None\n"
                "    return dist.all_reduce(preds[valid].sum())\n"
                "def main(preds):\n    mine = slice(rank, None, dist.get_world_size())\n    return score(preds[mine])",
                expected_message="all_reduce() is skipped on ranks where 'valid.any()' is false (line 16 "
                "passes 'preds[mine]', and it holds the data of the rank it was given): the 'return' at line 12 "
                "is taken only there, while the other ranks go on calling it, so the ranks' calls stop pairing up "
                "and every rank hangs until the timeout (those ranks run no collective here, while the others run "
                "all_reduce (line 13) only)",
                range=(5, 12, 5, 47)),
        # Every rank copies a tree to one destination: the first creates it, the others raise.
        Invalid("import shutil\ndef mirror(src, dst):\n    try:\n        shutil.copytree(src, dst)\n"
                "    except OSError:\n        return\n    dist.barrier()",
                expected_message="barrier() is skipped on ranks where the 'try' at line 11 raises (every rank "
                "creates, removes or moves the same path, and all but the first to do so raise): the 'return' at "
                "line 14 is taken only there, while the other ranks go on calling it, so the ranks' calls stop "
                "pairing up and every rank hangs until the timeout (those ranks run no collective here, while the "
                "others run barrier (line 15) only)",
                range=(7, 5, 7, 19)),
        # A share filtered by its items' data: as many as pass, not one item apart (fairseq2#680).
        Invalid("def f(rows, world):\n    kept = [r for r in rows[rank::world] if len(r) <= 16]\n"
                "    batches = [kept[i:i + 4] for i in range(0, len(kept) - 3, 4)]\n    for b in batches:\n"
                "        dist.barrier()",
                expected_message="barrier() runs a different number of times on different ranks: the loop at "
                "line 12 iterates over 'batches', whose length can differ between ranks (each rank keeps the "
                "items of its own share that pass a test, as many as its data lets through), so the ranks' calls "
                "stop pairing up and every rank hangs until the timeout",
                range=(5, 9, 5, 23)),
        # Batches cut to whole rounds, then dealt, from a list each rank packs in its own order: a
        # sampler's seed drawn from the generator the module seeds with the rank (audio#3068).
        Invalid("from torch.utils.data import DataLoader, Sampler\nclass Batches(Sampler):\n"
                "    def __init__(self, n, world):\n        self.n, self.rank, self.world = n, rank, world\n"
                "        self.seed = int(torch.randint(0, 2**31 - 1, ()).item())\n    def batches(self):\n"
                "        g = torch.Generator().manual_seed(self.seed)\n        out = []\n"
                "        for i in torch.randperm(self.n, generator=g).tolist():\n            if i % 3:\n"
                "                out.append([i])\n        out = out[:len(out) - len(out) % self.world]\n"
                "        return out[self.rank::self.world]\n    def __iter__(self):\n        return iter(self.batches())\n"
                "    def __len__(self):\n        return len(self.batches())\n"
                "def main(ds, world):\n    torch.manual_seed(100 + rank)\n"
                "    for x in DataLoader(ds, batch_sampler=Batches(40, world)):\n        dist.all_reduce(x)",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop "
                "at line 28 iterates over 'DataLoader(ds, batch_sampler=Batches(40, world))', whose length can "
                "differ between ranks ('self.batches()' returns something else on some ranks), so the ranks' "
                "calls stop pairing up and every rank hangs until the timeout",
                range=(21, 9, 21, 27)),
        # A report reduced only where this process's own peak memory grew (Megatron-Bridge#3645).
        Invalid("import resource\ndef f(loader):\n    last = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
                "    for batch in loader:\n        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
                "        if peak - last > 16384:\n            top = torch.tensor([float(peak)])\n"
                "            dist.all_reduce(top, op=dist.ReduceOp.MAX)\n            last = peak",
                expected_message="all_reduce() runs only on ranks where 'peak - last > 16384' is true (it "
                "reads this process's own memory use): the other ranks never join it and every rank hangs until "
                "the timeout",
                range=(8, 13, 8, 55)),
        # A Lightning logger's experiment is real on global rank 0 alone (ReAgent#642).
        Invalid("import lightning as L\nclass M(L.LightningModule):\n    def on_validation_epoch_end(self):\n"
                "        writer = self.logger.experiment\n        if hasattr(writer, 'log_metrics'):\n"
                "            preds = self.all_gather(torch.cat(self.preds))\n"
                "            writer.log_metrics({'mean': preds.mean().item()})",
                expected_message="all_gather() runs only on ranks where 'hasattr(writer, 'log_metrics')' is "
                "true (a Lightning logger's experiment is real on global rank 0 only, and @rank_zero_experiment "
                "hands the other ranks a dummy): the other ranks never join it and every rank hangs until the "
                "timeout (those ranks run all_gather (line 14) only, while the others run no collective here)",
                range=(6, 21, 6, 59)),
        # Trackers made on some ranks only: a wandb run started under a rank test, Accelerate's
        # init_trackers (main process only).
        Invalid("import wandb\ndef f(model, loader):\n    if rank == 0:\n        wandb.init(project='x')\n"
                "    for x in loader:\n        loss = model(x).mean()\n        if wandb.run is not None:\n"
                "            dist.all_reduce(loss)\n            wandb.log({'loss': loss.item()})",
                expected_message="all_reduce() runs only on ranks where 'wandb.run is not None' is true "
                "(wandb.init() at line 12 runs under a test on the rank): the other ranks never join it and every "
                "rank hangs until the timeout",
                range=(8, 13, 8, 34)),
        Invalid("def f(model, loader):\n    accelerator.init_trackers('x')\n    for x in loader:\n"
                "        loss = model(x).mean()\n        if accelerator.trackers:\n"
                "            accelerator.log({'loss': accelerator.gather(loss).mean().item()})",
                expected_message="gather() runs only on ranks where 'accelerator.trackers' is true "
                "(Accelerate's init_trackers() makes trackers on the main process only): the other ranks never "
                "join it and every rank hangs until the timeout",
                range=(6, 38, 6, 62)),
        # The same helper catching another error than the caller's handler: the parse error reaches
        # the caller's `except ValueError` on the rank whose row holds it.
        Invalid("""
            def reward(text):
                try:
                    return float(text.split("=")[1])
                except IndexError:
                    return 0.0
            def score(texts):
                return torch.tensor([reward(t) for t in texts])
            ROWS = [["x = 1", "x = ?"], ["x = 2"], ["x = 3"], ["x = 4"]]
            def f():
                for row in ROWS[rank::dist.get_world_size()]:
                    try:
                        rewards = score(row)
                    except ValueError:
                        continue
                    dist.all_reduce(rewards.sum())
            """, expected_message="all_reduce() is skipped on ranks where the 'try' at line 19 raises (work in "
                "the 'try' block can fail on some ranks only): the 'continue' at line 22 is taken only there, "
                "while the other ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs "
                "until the timeout",
                range=(15, 9, 15, 39)),
        # A generator that skips the batch its helper fails on, handed the rank's own records:
        # each rank yields as many batches as its records let through (torchrec#4294's shape).
        Invalid("""
            def read(record):
                if record is None:
                    raise OSError("torn record")
                return torch.tensor(record)
            def batches(shard):
                for start in range(0, len(shard), 2):
                    try:
                        pairs = [read(r) for r in shard[start:start + 2]]
                    except OSError:
                        continue
                    yield torch.stack(pairs)
            RECORDS = [[1.0, 1.0], None, [2.0, 2.0], [3.0, 3.0]]
            def f():
                for x in batches(RECORDS[rank::dist.get_world_size()]):
                    dist.all_reduce(x)
            """, expected_message="all_reduce() runs a different number of times on different ranks: the loop "
                "at line 22 iterates over 'batches(RECORDS[rank::dist.get_world_size()])', whose length can "
                "differ between ranks (it holds the data of the rank it was given), so the ranks' calls stop "
                "pairing up and every rank hangs until the timeout",
                range=(15, 9, 15, 27)),
        # A retried save whose work after the barrier can fail on one rank's own lock file: that
        # rank runs the barrier again alone (returnn#1829's shape).
        Invalid("""
            import os
            def write_manifest(out_dir, index):
                lock = os.path.join(out_dir, f"loader-{index}.lock")
                if os.path.exists(lock):
                    os.remove(lock)
                    raise OSError("locked")
            def save(out_dir, step):
                for attempt in range(3):
                    try:
                        dist.barrier()
                        write_manifest(out_dir, rank)
                        return
                    except OSError:
                        continue
            """, expected_message="barrier() runs again on ranks where the work after it in the 'try' at line "
                "17 fails (work in the 'try' block can fail on some ranks only): 'write_manifest()' can raise "
                "there alone, and the loop at line 16 retries the 'try' there while the other ranks have left it, "
                "so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(10, 13, 10, 27)),
        # A heartbeat thread all-reducing on the default group while the main thread trains
        # (pytorch#175145's shape), as a Thread subclass and as a thread's target.
        Invalid("""
            import threading
            class Heartbeat(threading.Thread):
                def run(self):
                    while True:
                        dist.all_reduce(torch.ones(1))
            def train(steps):
                Heartbeat(daemon=True).start()
                for _ in range(steps):
                    dist.all_reduce(torch.ones(4))
            """, expected_message="all_reduce() runs in 'run', which runs in a thread of its own (Heartbeat "
                "derives from threading.Thread), on the default process group, which the main thread's "
                "all_reduce() (line 17) uses too: each rank issues the two threads' collectives in the order its "
                "own scheduling and clock give, so the ranks' calls stop pairing up and every rank hangs until "
                "the timeout",
                range=(5, 13, 5, 43)),
        Invalid("""
            import threading
            def beat(stop):
                while not stop.wait(0.05):
                    dist.barrier()
            def train(steps):
                stop = threading.Event()
                threading.Thread(target=beat, args=(stop,), daemon=True).start()
                for _ in range(steps):
                    dist.all_reduce(torch.ones(4))
            """, expected_message="barrier() runs in 'beat', which runs in a thread of its own "
                "('threading.Thread' runs it), on the default process group, which the main thread's all_reduce() "
                "(line 17) uses too: each rank issues the two threads' collectives in the order its own "
                "scheduling and clock give, so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout",
                range=(4, 9, 4, 23)),
        # The same manager around work on the rank's own rows before the all-reduce: where the
        # factorisation fails, that rank skips it (blind27's Cholesky).
        Invalid("""
            import contextlib
            @contextlib.contextmanager
            def tolerate(*errors):
                try:
                    yield
                except errors as exc:
                    print(exc)
            def recordings():
                x = torch.randn(48, 6)
                return x
            def f():
                x = recordings()
                share = x.chunk(dist.get_world_size())[rank]
                for batch in share.split(8):
                    with tolerate(torch.linalg.LinAlgError):
                        chol = torch.linalg.cholesky(batch.T @ batch)
                        dist.all_reduce(chol)
            """, expected_message="all_reduce() is skipped on ranks where the work before it in the 'with' at "
                "line 23 fails (it works on data that differs between ranks): 'torch.linalg.cholesky()' can raise "
                "there alone, and tolerate() goes on without it, so the ranks' calls stop pairing up and every "
                "rank hangs until the timeout",
                range=(17, 13, 17, 34)),
        # The least count agreed on is of another list: the kept items still differ in number.
        Invalid("""
            def f(groups, world):
                kept = [g for g in groups[rank::world] if g.std() > 0]
                fewest = torch.tensor(len(groups))
                dist.all_reduce(fewest, op=dist.ReduceOp.MIN)
                kept = kept[:int(fewest)]
                for g in kept:
                    dist.all_reduce(g)
            """, expected_message="all_reduce() runs a different number of times on different ranks: the loop "
                "at line 14 iterates over 'kept', whose length can differ between ranks (each rank keeps the "
                "items of its own share that pass a test, as many as its data lets through), so the ranks' calls "
                "stop pairing up and every rank hangs until the timeout",
                range=(7, 9, 7, 27)),
        # A helper returning a tuple whose first item holds as many rows as the rank decides: each
        # item of `x, y = read_part(rank)` is followed.
        Invalid("""
            def read_part(rank):
                rows = 12 if rank == 0 else 7
                x = torch.randn(rows, 4)
                return x, x.sum(1)
            def f():
                x, y = read_part(rank)
                for start in range(0, len(x), 4):
                    dist.all_reduce(x[start:start + 4].sum())
            """, expected_message="all_reduce() runs a different number of times on different ranks: the loop "
                "at line 15 iterates over 'range(0, len(x), 4)', whose length can differ between ranks "
                "('read_part()' returns as many items as the rank makes it hold), so the ranks' calls stop "
                "pairing up and every rank hangs until the timeout",
                range=(8, 9, 8, 50)),
        # Each rank's environment, seeded with the rank, plays episodes of its own length: the replay
        # buffer reaches its start size at a different step on each rank (UniLab#304).
        Invalid("""
            import random
            class Env:
                def __init__(self, seed):
                    self.rng = random.Random(seed)
                def episode(self):
                    return [0] * self.rng.randint(5, 9)
            def f(rank):
                env = Env(seed=100 + rank)
                buffer = []
                for step in range(4):
                    buffer.extend(env.episode())
                    if len(buffer) < 20:
                        continue
                    dist.all_reduce(torch.ones(1))
            """,
                expected_message="all_reduce() is skipped on ranks where 'len(buffer) < 20' is true (it is drawn from a "
                "random generator the module seeds with the rank): the 'continue' at line 21 is taken "
                "only there, while the other ranks go on calling it, so the ranks' calls stop pairing up "
                "and every rank hangs until the timeout",
                range=(14, 9, 14, 39)),
        # A draw from weights seeded with the rank raises on some ranks only (all zero weights), and
        # the handler skips the update (ray#66030).
        Invalid("""
            def draw(seed):
                g = torch.Generator().manual_seed(seed)
                return torch.rand(8, generator=g)
            def f(rank):
                for step in range(3):
                    weights = draw(100 * rank + step)
                    try:
                        idx = torch.multinomial(weights, 4)
                    except RuntimeError:
                        continue
                    dist.all_reduce(weights[idx])
            """,
                expected_message="all_reduce() is skipped on ranks where the 'try' at line 15 raises (work in the 'try' "
                "block can fail on some ranks only): the 'continue' at line 18 is taken only there, while"
                " the other ranks go on calling it, so the ranks' calls stop pairing up and every rank "
                "hangs until the timeout",
                range=(11, 9, 11, 38)),
        # A non-finite check of the rank's own gradients, before they are averaged by hand: the rank
        # whose batch overflowed skips the all-reduce the others run (pytorch#76282).
        Invalid("""
            def grads_finite(model):
                return all(bool(torch.isfinite(p.grad).all()) for p in model.parameters() if p.grad is not None)
            def train(model, batches):
                for x in batches:
                    model(x).sum().backward()
                    if not grads_finite(model):
                        continue
                    for p in model.parameters():
                        dist.all_reduce(p.grad)
            """,
                expected_message="all_reduce() is skipped on ranks where 'grads_finite(model)' is false ('grads_finite()' "
                "returns something else on some ranks, as it reads this rank's own gradients, which "
                "nothing has averaged between the ranks yet): the 'continue' at line 15 is taken only "
                "there, while the other ranks go on calling it, so the ranks' calls stop pairing up and "
                "every rank hangs until the timeout",
                range=(9, 13, 9, 36)),
        # Clipping that raises on the rank's own non-finite gradient norm, caught by skipping the batch.
        Invalid("""
            def train(model, batches):
                for x in batches:
                    model(x).sum().backward()
                    try:
                        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
                    except RuntimeError:
                        continue
                    for p in model.parameters():
                        dist.all_reduce(p.grad)
            """,
                expected_message="all_reduce() is skipped on ranks where the 'try' at line 12 raises (work in the 'try' "
                "block can fail on some ranks only): the 'continue' at line 15 is taken only there, while"
                " the other ranks go on calling it, so the ranks' calls stop pairing up and every rank "
                "hangs until the timeout",
                range=(9, 13, 9, 36)),
        # A plateau scheduler stepped on the rank's own training loss sets each rank's learning
        # rate apart, and a floor on it ends the ranks' loops at different epochs (DALLE-pytorch#268).
        Invalid("""
            def train(model, opt, epochs):
                sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1)
                batches = load_batches(rank)
                for epoch in range(epochs):
                    total = 0.0
                    for x in batches:
                        loss = model(x).mean()
                        total += loss.item()
                        dist.all_reduce(loss)
                    sched.step(total)
                    if opt.param_groups[0]["lr"] < 1e-3:
                        break
            """,
                expected_message="all_reduce() is skipped in the following iterations on ranks where "
                "'opt.param_groups[0][\"lr\"] < 1e-3' is true (it is set by 'sched.step()', which each rank"
                " calls with a value that differs between ranks): the 'break' at line 20 is taken only "
                "there, while the other ranks go on calling it, so the ranks' calls stop pairing up and "
                "every rank hangs until the timeout",
                range=(9, 13, 9, 34)),
        # Early stopping on a running meter of the rank's own losses: the patience runs out at a
        # different epoch on each rank.
        Invalid("""
            def train(model, epochs):
                best, bad = float("inf"), 0
                for epoch in range(epochs):
                    meter = Meter()
                    for x in load_batches(rank):
                        loss = model(x).mean()
                        meter.update(loss.item())
                        dist.all_reduce(torch.ones(1))
                    if meter.avg < best:
                        best, bad = meter.avg, 0
                    else:
                        bad += 1
                    if bad > 3:
                        break
            """,
                expected_message="all_reduce() is skipped in the following iterations on ranks where 'bad > 3' is true (it"
                " is set under a condition that differs between ranks): the 'break' at line 22 is taken "
                "only there, while the other ranks go on calling it, so the ranks' calls stop pairing up "
                "and every rank hangs until the timeout",
                range=(8, 13, 8, 43)),
        # A hand-written loss scaler's overflow test returns True on the rank's own non-finite
        # gradient, and the caller skips the averaging (dialogue-generation#10).
        Invalid("""
            class LossScaler:
                def found_overflow(self, params):
                    for p in params:
                        if p.grad is not None and not torch.isfinite(p.grad).all():
                            return True
                    return False
            def average(model):
                for p in model.parameters():
                    dist.all_reduce(p.grad)
            def train(model, batches):
                scaler = LossScaler()
                for x in batches:
                    model(x).sum().backward()
                    if scaler.found_overflow(model.parameters()):
                        continue
                    average(model)
            """,
                expected_message="average() is skipped on ranks where 'scaler.found_overflow(model.parameters())' is true "
                "('scaler.found_overflow()' returns something else on some ranks, as it reads this rank's"
                " own gradients, which nothing has averaged between the ranks yet): the 'continue' at "
                "line 23 is taken only there, while the other ranks go on calling it, so the ranks' calls"
                " stop pairing up and every rank hangs until the timeout",
                range=(16, 9, 16, 23)),
        # Every rank frees the node's cache when its own share is done: a slower rank finds it
        # gone (mosaicml/streaming#400).
        Invalid("""
            import shutil
            def evaluate(cache, rows):
                err = torch.zeros(1)
                for index in rows:
                    err += torch.load(os.path.join(cache, f"{index}.pt")).sum()
                shutil.rmtree(cache, ignore_errors=True)
                dist.all_reduce(err)
            """,
                expected_message="shutil.rmtree() of 'cache' may run while other ranks still read it (torch.load() at line"
                " 13): no collective between a rank's reads and the removal makes it wait for the others,"
                " so a slower rank finds the path gone and raises FileNotFoundError, and all_reduce() "
                "(line 15) waits for it until the timeout",
                range=(6, 5, 6, 45)),
        # The main process removes the file the others may not have read yet.
        Invalid("""
            def load_shared(path):
                state = torch.load(path)
                if rank == 0:
                    os.remove(path)
                dist.barrier()
                return state
            """,
                expected_message="os.remove() of 'path' may run while other ranks still read it (torch.load() at line 10):"
                " no collective between a rank's reads and the removal makes it wait for the others, so a"
                " slower rank finds the path gone and raises FileNotFoundError, and barrier() (line 13) "
                "waits for it until the timeout",
                range=(4, 9, 4, 24)),
        # As many drafted tokens kept as this rank's own drafts pass: `+=` grows each rank's
        # list by its own count, and the loop on its length runs apart.
        Invalid("""
            def decode(prompts):
                ids = list(prompts[rank])
                while len(ids) < 8:
                    drafts = [t + 1 for t in ids[-3:]]
                    verdict = torch.tensor(drafts)
                    dist.all_reduce(verdict)
                    accepted = 0
                    while accepted < 3 and drafts[accepted] % 2 == 0:
                        accepted += 1
                    ids += drafts[:accepted] + [0]
            """,
                expected_message="all_reduce() runs a different number of times on different ranks: the loop at line 11 "
                "runs while 'len(ids) < 8' holds, which can differ between ranks (it is set under a "
                "condition that differs between ranks), so the ranks' calls stop pairing up and every "
                "rank hangs until the timeout",
                range=(6, 9, 6, 33)),
        # A length limit counted from each rank's own prompt (transformers#18281's shape): the
        # helper handed one of the rank's items decodes for as many steps as that item is long.
        Invalid("""
            PROMPTS = [[1, 2], [3, 4, 5, 6]]
            def decode(prompt):
                out = list(prompt)
                while len(out) < 2 * len(prompt):
                    step = torch.tensor([float(out[-1])])
                    dist.all_reduce(step)
                    out.append(int(step))
                return out
            def main():
                with accelerator.split_between_processes(PROMPTS) as mine:
                    return [decode(p) for p in mine]
            """,
                expected_message="all_reduce() runs a different number of times on different ranks: the loop at line 12 "
                "runs while 'len(out) < 2 * len(prompt)' holds, which can differ between ranks (line 19 "
                "passes 'p', and each item the rank was given is as long as its own data), so the ranks' "
                "calls stop pairing up and every rank hangs until the timeout",
                range=(6, 9, 6, 30)),
        # The same interval from each rank's own clock (pytorch/xla#1728's shape).
        Invalid("""
            import time
            from lightning.fabric import Fabric
            LENGTHS = [16, 4096]
            def calibrate(fabric, model, batch):
                start = time.perf_counter()
                model(batch)
                per_step = time.perf_counter() - start
                return max(1, round(0.2 / per_step))
            def main():
                fabric = Fabric()
                batches = [torch.randn(LENGTHS[fabric.global_rank % 2], 8) for _ in range(12)]
                model = fabric.setup(torch.nn.Linear(8, 1))
                every = calibrate(fabric, model, batches[0])
                for step, x in enumerate(batches):
                    fabric.backward(model(x).sum())
                    if (step + 1) % every == 0:
                        fabric.barrier()
            """,
                expected_message="barrier() runs only on ranks where '(step + 1) % every == 0' is true ('calibrate()' "
                "returns something else on some ranks, as it reads the clock, which differs between "
                "ranks): the other ranks never join it and every rank hangs until the timeout",
                range=(17, 13, 17, 29)),
        # The barrier a flag turns on, asked for only once this rank's warm-up is over
        # (Megatron-LM#742's shape).
        Invalid("""
            import time
            BUCKETS = (16, 32, 64)
            SHARDS = [[16, 32, 64, 16, 32], [16, 16, 32, 16, 64]]
            class Timer:
                def start(self, barrier=False):
                    if barrier:
                        dist.barrier()
                    self.began = time.perf_counter()
            def train():
                timer = Timer()
                seen = set()
                for length in SHARDS[rank % 2]:
                    warm = seen >= set(BUCKETS)
                    seen.add(length)
                    if warm:
                        timer.start(barrier=True)
            """,
                expected_message="start() runs only on ranks where 'warm' is true (it holds the data of the rank it was "
                "given): start() calls dist.barrier() (case.py:15), and the other ranks never join it and"
                " every rank hangs until the timeout",
                range=(16, 13, 16, 38)),
        # The same step over an odd count: one rank gets one item more.
        Invalid("""
            def train(model, xs):
                for i in range(rank, 15, 2):
                    dist.all_reduce(model(xs[i]).detach())
            """,
                expected_message="all_reduce() runs a different number of times on different ranks: the loop at line 10 "
                "iterates over 'range(rank, 15, 2)', whose length depends on the rank, so the ranks' "
                "calls stop pairing up and every rank hangs until the timeout",
                range=(3, 9, 3, 47)),
        # A helper that answers True from a handler: literals it returns are not what the ranks
        # agreed on (summaries._returns_agreed reads only tests of collectives' results).
        Invalid("""
            def unreadable(batch):
                try:
                    torch.load(batch)
                except OSError:
                    return True
                return False
            def main():
                g = torch.Generator().manual_seed(rank)
                for _ in range(8):
                    batch = torch.randn(4, generator=g)
                    if unreadable(batch):
                        continue
                    dist.all_reduce(torch.ones(1))
            """,
                expected_message="all_reduce() is skipped on ranks where 'unreadable(batch)' is true (it holds the data of"
                " the rank it was given): the 'continue' at line 20 is taken only there, while the other "
                "ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs until "
                "the timeout",
                range=(13, 9, 13, 39)),
        # A method's result handed to another method that returns early on it: the first method runs a
        # collective too, so reading its result while its own parameters are worked out must not
        # settle the caller's answer for good.
        Invalid("""
            class Step:
                def __init__(self, model, limit):
                    self.model, self.limit = model, limit
                    self.loss_fn = torch.nn.MSELoss()
                def first(self, z):
                    dist.barrier()
                    return self.loss_fn(self.model(z), z).item()
                def second(self, loss):
                    if loss >= self.limit:
                        return False
                    dist.barrier()
                    return True
            def main():
                step = Step(torch.nn.Linear(4, 4), 0.5)
                gen = torch.Generator().manual_seed(rank)
                for _ in range(3):
                    loss = step.first(torch.randn(4, generator=gen))
                    step.second(loss)
            """, expected_message="barrier() runs only where 'loss >= self.limit' is false: second() returns before it "
                "otherwise, and its call at line 26 passes 'loss' as 'loss', which can differ between "
                "ranks ('step.first()' returns something else on some ranks, as line 25 passes "
                "'torch.randn(4, generator=gen)', and it is drawn from a random generator the module "
                "seeds with the rank), so the ranks' calls stop pairing up and every rank hangs until the"
                " timeout",
                range=(11, 9, 11, 23)),
        # The same averager skipped where a rank's batch has no labelled row: its count of calls drifts
        # from the others', and so does its N-th call's all-reduce (a DiLoCo outer step).
        Invalid("""
            class Averager:
                def __init__(self, model, every):
                    self.model, self.every, self.calls = model, every, 0
                def step(self):
                    self.calls += 1
                    if self.calls % self.every == 0:
                        self._sync()
                def _sync(self):
                    for p in self.model.parameters():
                        dist.all_reduce(p.data)
            def train(model, opt, loader):
                averager = Averager(model, 4)
                for x, y in loader:
                    if (y != -100).sum() == 0:
                        continue
                    torch.nn.functional.cross_entropy(model(x), y, ignore_index=-100).backward()
                    opt.step()
                    averager.step()
            """, expected_message="step() is skipped on ranks where '(y != -100).sum() == 0' is true (it is computed from "
                "this rank's own batch of data): the 'continue' at line 23 is taken only there, while the"
                " other ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs "
                "until the timeout",
                range=(18, 9, 18, 24)),
        # An exclusive create through os.open (O_EXCL): only the first rank to get there succeeds.
        Invalid("""
            def claim_and_sync(run_dir):
                try:
                    fd = os.open(os.path.join(run_dir, "owner"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                except FileExistsError:
                    return False
                os.close(fd)
                dist.barrier()
                return True
            """, expected_message="barrier() is skipped on ranks where the 'try' at line 10 raises (every rank creates, "
                "removes or moves the same path, and all but the first to do so raise): the 'return' at "
                "line 13 is taken only there, while the other ranks go on calling it, so the ranks' calls"
                " stop pairing up and every rank hangs until the timeout (those ranks run no collective "
                "here, while the others run barrier (line 15) only)",
                range=(7, 5, 7, 19)),
        # a helper returning None on a test of its argument, handed each rank's own ids (blind47)
        Invalid("def load_logits(i):\n    path = os.path.join('/cache', f'{i}.pt')\n    if not os.path.exists(path):\n"
                "        return None\n    return torch.load(path)\n"
                "def train(n):\n    for i in range(rank, n, 2):\n        logits = load_logits(i)\n"
                "        if logits is None:\n            continue\n        dist.barrier()",
                expected_message="barrier() is skipped on ranks where 'logits is None' is true ('load_logits()' returns a "
                "value computed from the rank): the 'continue' at line 18 is taken only there, while the "
                "other ranks go on calling it, so the ranks' calls stop pairing up and every rank hangs "
                "until the timeout",
                range=(11, 9, 11, 23)),
        Invalid("def teacher_logits(i):\n    if i % 3 == 0:\n        return None\n    return torch.ones(4) * i\n"
                "def train():\n    for i in range(rank, 8, 2):\n        logits = teacher_logits(i)\n"
                "        if logits is None:\n            continue\n        dist.barrier()",
                expected_message="barrier() is skipped on ranks where 'logits is None' is true ('teacher_logits()' returns"
                " a value computed from the rank): the 'continue' at line 17 is taken only there, while "
                "the other ranks go on calling it, so the ranks' calls stop pairing up and every rank "
                "hangs until the timeout",
                range=(10, 9, 10, 23)),
        # an item of the helper's tuple holds as many rows as the rank's own files name (blind48)
        Invalid("ROWS = [16, 16, 8]\ndef load(files):\n    n = sum(ROWS[f] for f in files)\n"
                "    return torch.randn(n, 4), torch.randn(n, 1)\n"
                "def f(mine):\n    x, y = load(mine)\n    for i in range(len(x)):\n        dist.barrier()\n"
                "f(list(range(len(ROWS)))[accelerator.process_index::2])",
                expected_message="barrier() runs a different number of times on different ranks: the loop at line 15 "
                "iterates over 'range(len(x))', whose length can differ between ranks (line 17 passes "
                "'list(range(len(ROWS)))[accelerator.process_index::2]', and it holds the data of the "
                "rank it was given), so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout",
                range=(8, 9, 8, 23)),
        # ... but not at every item but the last
        Invalid("def f(shard, steps):\n    for step in range(steps):\n        micro = [m for m in shard[rank::2] if m]\n"
                "        for i, batch in enumerate(micro):\n            last = i == len(micro) - 1\n"
                "            if not last:\n                dist.all_reduce(batch)",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop at line 12 "
                "iterates over 'enumerate(micro)', whose length can differ between ranks (it is computed "
                "from the rank), so the ranks' calls stop pairing up and every rank hangs until the "
                "timeout",
                range=(7, 17, 7, 39)),
        # ... nor as many as the most of them holds
        Invalid("from lightning.fabric import Fabric\nfabric = Fabric()\ndef f(shard):\n    mine = shard[rank::2]\n"
                "    steps = int(fabric.all_reduce(torch.tensor(len(mine)), reduce_op='max').item())\n"
                "    for row in mine[:steps]:\n        fabric.all_reduce(row)",
                expected_message="all_reduce() runs a different number of times on different ranks: the loop at line 14 "
                "iterates over 'mine[:steps]', whose length can differ between ranks (it is computed from"
                " the rank), so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(7, 9, 7, 31)),
        # ... but padded up to a count of its own
        Invalid("def f(shard):\n    mine = [m for m in shard[rank::2] if m]\n    most = torch.tensor(len(mine) + 1)\n"
                "    padded = list(mine)\n"
                "    padded += [None] * (int(most) - len(padded))\n    for item in padded:\n        dist.barrier()",
                expected_message="barrier() runs a different number of times on different ranks: the loop at line 14 "
                "iterates over 'padded', whose length can differ between ranks (it is computed from the "
                "rank), so the ranks' calls stop pairing up and every rank hangs until the timeout",
                range=(7, 9, 7, 23)),
        # ... nor under a test that holds at every item, its sides swapped (`len(micro) - 1 >= i`)
        Invalid("def f(shard, steps):\n    for step in range(steps):\n        micro = [m for m in shard[rank::2] if m]\n"
                "        for i, batch in enumerate(micro):\n            if len(micro) - 1 >= i:\n"
                "                dist.all_reduce(batch)",
                expected_message="all_reduce() runs only on ranks where 'len(micro) - 1 >= i' is true: the other ranks "
                "never join it and every rank hangs until the timeout",
                range=(6, 17, 6, 39)),
    )

    @staticmethod
    def sites(analysis: ModuleAnalysis) -> Iterator[CallSite]:
        """The calls judged here: collectives. Framework calls that run collectives inside are
        judged the same way by BCL011 (collective_method_on_some_ranks.py)."""
        return (site for site in analysis.calls if site.api.payload != apis.HIDDEN)

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        yield from self.check_sites(analysis)
        yield from _entries_missing_on_some_ranks(analysis)
        yield from _paths_every_rank_races_for(analysis)
        yield from _paths_removed_under_readers(analysis)
        yield from _helpers_out_of_order(analysis)
        yield from _formatted_where_logged(analysis)
        yield from _classes_chosen_by_rank(analysis)
        yield from _trainer_loaders_of_uneven_length(analysis)
        yield from _hooks_of_skipped_submodules(analysis)
        yield from _collectives_in_threads(analysis)

    def check_sites(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        layouts: dict[cst.CSTNode, _Layout] = {}
        skipped_inside: set = set()
        for site in self.sites(analysis):
            if site.rank_decorator is not None:
                yield Report(site.call, _decorated_message(analysis, site),
                             help="Call it on every rank, outside the decorated function")
            elif analysis.some_ranks_hook(site.scope) is not None:
                yield Report(site.call, _hook_message(analysis, site),
                             help="Call it on every rank: in a hook every rank runs (Lightning's `setup`)")
            elif (per_batch := analysis.uneven_batches_hook(site.scope)) is not None:
                yield Report(site.call, f"{site.api.called} runs a different number of times on different ranks: "
                             f"{per_batch}, {_UNEVEN}", help=_LOOP_HELP)
            elif site.main_process_first is not None:
                yield Report(site.call, _main_first_message(analysis, site),
                             help="Move it after the with block")
            elif site.api.memoised and _missed_apart(analysis, site) is not None:
                yield Report(site.call, _missed_apart(analysis, site), help=_CACHE_HELP)
            elif _runs_on_some_ranks(analysis, site) and not _computed_alike_before(analysis, site):
                layout = _layout(layouts, site.scope)
                exit_ = _exit_explaining(analysis, site, layout)
                if exit_ is not None:
                    yield Report(site.call, _exit_message(analysis, site, exit_, layout), help=_EXIT_HELP)
                else:
                    yield Report(site.call, _branch_message(analysis, site, layout),
                                 _move_after_branch(analysis, site, layout), _branch_help(site, layout))
            else:
                exit_ = _rank_dependent_exit(analysis, site, _layout(layouts, site.scope))
                if exit_ is not None:
                    yield Report(site.call, _exit_message(analysis, site, exit_, _layout(layouts, site.scope)),
                                 help=_EXIT_HELP)
                    continue
                loop = _rank_sharded_loop(analysis, site) if not (site.api.memoised or site.api.first_call_only) \
                    else None
                if loop is not None:  # (a memoised call given alike keys runs its collective once)
                    yield Report(site.call, _loop_message(analysis, site, *loop), help=_LOOP_HELP)
                    continue
                ordered = _set_ordered_loop(analysis, site)
                if ordered is not None:
                    yield Report(site.call, _order_message(analysis, site, *ordered), help=_ORDER_HELP)
                    continue
                swapped = _arms_out_of_order(analysis, site, _layout(layouts, site.scope))
                if swapped is not None:
                    yield Report(site.call, swapped, help=_ARM_ORDER_HELP)
                    continue
                switched = _sync_switched_apart(analysis, site)
                if switched is not None:
                    yield Report(site.call, switched, help=_SWITCH_HELP)
                    continue
                keyed = _keyed_apart(analysis, site)
                if keyed is not None:
                    yield Report(site.call, keyed, help=_KEYS_HELP)
                    continue
                typed = _typed_apart(analysis, site)
                if typed is not None:
                    yield Report(site.call, typed, help=_TYPED_HELP)
                    continue
                per_update = _gathered_per_update(analysis, site)
                if per_update is not None:
                    yield Report(site.call, per_update, help=_PER_UPDATE_HELP)
                    continue
                cached = _compute_from_cache(analysis, site)
                if cached is not None:
                    yield Report(site.call, cached, help=_CACHE_COMPUTE_HELP)
                    continue
                failed_before = _skipped_by_a_failure(analysis, site) or _raised_inside(analysis, site) \
                    or _exit_skipped_on_failure(analysis, site) \
                    or _unpicklable_on_some_ranks(analysis, site) or _finally_after_a_failure(analysis, site)
                if failed_before is not None:
                    yield Report(site.call, failed_before, help=_FAILURE_HELP)
                    continue
                retried = _retried_on_failure(analysis, site)
                if retried is not None:
                    yield Report(site.call, retried, help=_RETRY_HELP)
                    continue
                skipped_by = _short_circuit(analysis, site)
                if skipped_by is not None:
                    yield Report(site.call, skipped_by, help=_SHORT_CIRCUIT_HELP)
                    continue
                early = _early_return_in_callee(analysis, site)
                if early is not None:
                    if early[0] not in skipped_inside:  # one report per collective, for its first caller
                        skipped_inside.add(early[0])
                        yield Report(*early, help=_EXIT_HELP)
                    continue
                skipped = resumption.unresumed(analysis, site.call, site.scope)
                if skipped is not None:
                    yield Report(site.call, _unresumed_message(analysis, site, skipped), help=_RESUME_HELP)


_KEYS_HELP = "Give the dict the same keys in the same order on every rank: fill it from a fixed list of keys"
# accelerate's operations that walk a dict (recursively_apply) and run one collective per value.
_PER_ENTRY = frozenset({"gather", "gather_for_metrics", "reduce", "pad_across_processes", "broadcast"})


def _keyed_apart(analysis: ModuleAnalysis, site: CallSite) -> Optional[str]:
    """accelerate's gather or reduce of a dict whose keys, or their order, can differ between
    ranks (filled from the rank's own data, `counts.setdefault(task, ...)`): it runs one
    collective per value, so the ranks pair different entries, or a different number of them."""
    api = site.api
    if not api.qualified_name.startswith(("accelerate.", "Accelerator.")) or api.short_name not in _PER_ENTRY \
            or site.payload is None:
        return None
    payload = site.payload
    made = analysis.inlined_return(payload) if isinstance(payload, cst.Call) else payload
    if not (isinstance(made, (cst.Dict, cst.DictComp)) or _assigned_a_dict(analysis, payload)):
        return None
    reason = counted(analysis.divergence.length_at(site.call, payload))
    if reason is None:
        return None
    return (f"{api.called} runs one collective per entry of '{analysis.code(payload)}', whose keys can differ "
            f"between ranks ({reason}): accelerate walks the dict and runs it on each value in turn, {_UNEVEN}")


# accelerate's gathers and reductions that take another path for what is not a tensor (accelerate
# 1.15.0: gather_for_metrics switches to gather_object, gather and reduce raise in recursively_apply).
_TENSOR_OR_OBJECT = frozenset({"gather", "gather_for_metrics", "reduce"})
_TENSOR_ONLY = frozenset({"all_reduce", "reduce", "broadcast", "all_gather"})
_ACCELERATE_PATHS = ("accelerate sends a tensor with one collective and anything else with others (gather_for_metrics "
                     "gathers it as an object, gather and reduce raise on it), so the ranks' calls do not pair up and "
                     "every rank fails or hangs until the timeout")
# Measured with gloo on 2 processes: the other rank fails with "Connection closed by peer" once
# the failing process exits.
_TORCH_TYPE_ERROR = ("torch.distributed raises TypeError ('Expected parameter `tensor` of type torch.Tensor') on the "
                     "ranks holding the number, and the others fail when those processes exit (or wait until the "
                     "timeout where they do not)")
_TYPED_HELP = "Send a tensor on every rank: torch.tensor(0.0) in place of the Python number"


def _typed_apart(analysis: ModuleAnalysis, site: CallSite) -> Optional[str]:
    """`score = torch.stack(kept).mean() if kept else 0.0` then `accelerator.gather_for_metrics(score)`,
    where `kept` differs between ranks: a tensor on some, a Python number on the others, and
    accelerate gathers the two with different collectives."""
    api = site.api
    accelerate = api.qualified_name.startswith(("accelerate.", "Accelerator."))
    torch = api.qualified_name.rpartition(".")[0] in apis.TORCH_MODULES and api.short_name in _TENSOR_ONLY
    if not (accelerate and api.short_name in _TENSOR_OR_OBJECT or torch) \
            or site.payload is None or argument_value(site.call, None, "use_gather_object") is not None:
        return None
    made = {id(value) for world in site.reached for value in (analysis.values_in_world(site, site.payload, world) or ())}
    # The data flow follows each arm of `a if test else b`: the choices are those whose arms reach.
    choices = [node for node in every_node(site.scope, cst.IfExp) if id(node.body) in made or id(node.orelse) in made]
    for choice in choices:
        arms = (choice.body, choice.orelse)
        plain = [arm for arm in arms if isinstance(arm, (cst.Integer, cst.Float)) or (accelerate and is_none(arm))]
        if len(plain) != 1 or not any(_makes_a_tensor(analysis, arm) for arm in arms if arm is not plain[0]):
            continue
        why = analysis.divergence.value_at(site.call, choice.test)
        if why is not None:
            test, truth = analysis.code(choice.test), plain[0] is choice.orelse
            effect = _TORCH_TYPE_ERROR if torch else _ACCELERATE_PATHS
            return (f"{api.called} takes '{analysis.code(site.payload)}', a tensor where '{test}' is "
                    f"{'true' if truth else 'false'} and {analysis.code(plain[0])} elsewhere, and '{test}' differs "
                    f"between ranks ({why}): {effect}")
    return None


def _makes_a_tensor(analysis: ModuleAnalysis, expr: cst.BaseExpression) -> bool:
    """`torch.stack(kept).mean()`: a call of torch's, or a method of what one returns."""
    while isinstance(expr, cst.Call):
        if any(name.startswith("torch.") for name in analysis.qualified_names(expr)):
            return True
        expr = expr.func.value if isinstance(expr.func, cst.Attribute) else None
    return False


def _assigned_a_dict(analysis: ModuleAnalysis, payload: cst.BaseExpression) -> bool:
    """`counts` or `self.counts` that the module assigns a dict (`{}`, `dict()`, `defaultdict(...)`)."""
    return isinstance(payload, (cst.Name, cst.Attribute)) and analysis.code(payload) in analysis.per_file(_dict_names)


# `counts = {}`, `self.counts: dict = defaultdict(list)`: the name assigned a dict.
_DICT_MADE = re.compile(r"(?<![\w.])((?:self\.)?\w+)[ \t]*(?::[^=\n]+)?=[ \t]*"
                        r"(?:\{|dict\(|(?:collections\.)?(?:defaultdict|OrderedDict)\()")


def _dict_names(text: str) -> frozenset:
    """The names and `self.` attributes the module assigns a dict, read once from its text."""
    return frozenset(_DICT_MADE.findall(text))


_CACHE_HELP = "Key the cache by values alike on every rank, or agree on the value first and cache what follows"


def _layout(layouts: dict, scope: cst.CSTNode) -> "_Layout":
    if scope not in layouts:
        layouts[scope] = _Layout.of(scope)
    return layouts[scope]


def _runs_on_some_ranks(analysis: ModuleAnalysis, site: CallSite) -> bool:
    """Reached in some worlds but not all, and no call of the same collective stands in for it
    in a missing world (the matching call on the other arm of the branch)."""
    reached = set(site.reached)
    missing = set(analysis.worlds[site.scope]) - reached
    if not reached or not missing:
        return False
    if site.group is not None and not _split_within_group(site, reached, missing):
        return False
    name = site.api.short_name
    if name in analysis.once(_NestedCollectives).names(analysis, site.scope):
        return False  # a nested function may run it on the other ranks: where it is called is unknown
    partners = [other for other in analysis.calls_in(site.scope)
                if other is not site and other.api.short_name == name and reached - set(other.reached)]
    if partners and site.scope not in analysis.divergence.data_scopes:
        # The scope's tests split the data worlds only through values alike on every rank of a job
        # (`and not evaluate`, a parameter): ranks of one job share their world's `data`.
        missing = {world for world in missing if world.data in {w.data for w in reached}}
    return any(not any(world in other.reached for other in partners) for world in missing)


def _rank_dependent_exit(analysis: ModuleAnalysis, site: CallSite, layout: "_Layout") -> Optional[Exit]:
    """An exit that can skip the call (now or in a later iteration) on some of the ranks that
    reach it, while others never take it: those call it more often. Exits that every rank may
    take (`if loss > best: break`) depend on data the ranks usually share, and are not reported."""
    reached = set(site.reached)
    exits = [e for e in analysis.exits[site.scope].skipping(site.call)
             if e.reached & reached and _counts(analysis, e) and not _in_another_arm(analysis, layout, e, site)]
    skipping = set().union(*(e.reached & reached for e in exits))
    never = reached - skipping
    if not skipping or not never:
        return None
    if site.group is not None and not _split_within_group(site, never, skipping):
        return None
    return next(e for e in exits if never - e.reached)


def _counts(analysis: ModuleAnalysis, exit_: Exit) -> bool:
    """A failing exit counts where data that differs between ranks decides it (exits.py)."""
    return exit_.counts() and (not exit_.failing or exit_.node in analysis.divergence.failing)


def _exit_explaining(analysis: ModuleAnalysis, site: CallSite, layout: "_Layout") -> Optional[Exit]:
    """Where no branch keeps the call from some ranks, an exit before it that those ranks take
    where a test on their data always holds (`if not metrics: sys.exit(0)` ahead of it, in the
    worlds where `not metrics` holds: ranks.World.data)."""
    missing = set(analysis.worlds[site.scope]) - set(site.reached)
    if _apart_by_branch(analysis, site, layout) or any(world.data is None for world in missing):
        return None
    return next((e for e in analysis.exits[site.scope].skipping(site.call)
                 if e.reached & missing and _counts(analysis, e) and not _in_another_arm(analysis, layout, e, site)), None)


def _apart_by_branch(analysis: ModuleAnalysis, site: CallSite, layout: "_Layout") -> bool:
    """An `if` around the call tests something that differs between ranks (a rank test, or an
    operand the divergence analysis records); `if isinstance(module, nn.Linear):` does not."""
    return any(_decided_by_rank(analysis, site, chain)
               or any(leaf in analysis.divergence.tests for test in chain.tests for leaf in boolean_leaves(test))
               for chain, _ in layout.enclosing.get(site.statement, ()))


def _missed_apart(analysis: ModuleAnalysis, site: CallSite) -> Optional[str]:
    """A memoised project function called with an argument that differs between ranks: each rank
    runs its collective only where its own cache misses, at different calls (PyOP2#696)."""
    if not site.api.memoised.startswith("@"):
        return None  # a lazily set attribute: its cache is the object's, whatever the arguments
    for arg in site.call.args:
        reason = analysis.divergence.value_at(site.call, arg.value)
        if reason is not None:
            return (f"{_reaching(site)} only where its cache misses: it is memoised "
                    f"({site.api.memoised}), and '{analysis.code(arg.value)}' can differ between ranks ({reason}): "
                    f"the ranks miss it at different calls, {_UNEVEN}")
    return None


def _early_return_in_callee(analysis: ModuleAnalysis, site: CallSite) -> Optional[tuple[cst.CSTNode, str]]:
    """A project function that returns before its collective on a test of a parameter, called
    with an argument that differs between ranks (`gather_metrics(local)` returning early on an
    empty `local`): where to report it and the message, or None. The report goes on the collective
    itself where the function is in this module (the line a reader looks at), else on the call."""
    for parameter, position, test in site.api.returns_early_on:
        argument = argument_value(site.call, position, parameter)
        reason = analysis.divergence.why_at(site.call, argument) if argument is not None else None
        if reason is None:
            continue
        passed = f"'{analysis.code(argument)}' as '{parameter}', which can differ between ranks ({reason}), {_UNEVEN}"
        inner = _collective_behind(analysis, site)
        if inner is not None:
            line = analysis.position(site.call).start.line
            return inner.call, (f"{inner.api.called} runs only where '{test}' is false: {site.api.short_name}() "
                                f"returns before it otherwise, and its call at line {line} passes {passed}")
        return site.call, (f"{_reaching(site)} only where '{test}' is false: it returns before that otherwise, and "
                           f"this call passes {passed}")
    return None


_SWITCH_HELP = ("Decide when to synchronise from values alike on every rank (a step count, an agreed "
                "accumulation length), or agree on the decision with a collective first")
_BACKWARDS = frozenset({"backward", "manual_backward"})
_SYNC_SWITCHES = frozenset({"no_backward_sync", "no_sync"})


def _sync_switched_apart(analysis: ModuleAnalysis, site: CallSite) -> Optional[str]:
    """`with fabric.no_backward_sync(model, enabled=is_accumulating): fabric.backward(loss)`: the
    backward all-reduces the gradients only where `enabled` is false, and `enabled` differs between
    ranks (each rank's own accumulation length): the message, or None."""
    if site.api.short_name not in _BACKWARDS:
        return None
    loops = [loop for loop in analysis.exits[site.scope].loops.get(site.call, ()) if isinstance(loop, cst.For)]
    for switch, enabled in _sync_switches(analysis, site):
        if enabled is None or any(_before_the_last(enabled, *_enumeration(loop)) for loop in loops):
            continue  # once per loop, at its last item (_synchronised_at_the_last_item)
        reason = analysis.divergence.value_at(site.call, enabled) or _rank_reason(analysis, site, enabled)
        if reason:
            return (f"{site.api.called} synchronises the gradients only on ranks where '{analysis.code(enabled)}' "
                    f"is false ('{analysis.code(switch.func)}' switches it off elsewhere), and "
                    f"'{analysis.code(enabled)}' can differ between ranks ({reason}), {_UNEVEN}")
    return None


def _sync_switches(analysis: ModuleAnalysis, site: CallSite) -> Iterator[tuple[cst.Call, Optional[cst.BaseExpression]]]:
    """(the call, its `enabled` argument) for each `with model.no_sync():` or
    `with fabric.no_backward_sync(model, enabled=...):` around the call."""
    for node in analysis.ancestors(site):
        for item in node.items if isinstance(node, cst.With) else ():
            switch = item.item
            if isinstance(switch, cst.Call) and last_name(switch.func) in _SYNC_SWITCHES:
                yield switch, argument_value(switch, 1, "enabled")


_FAILURE_HELP = ("Keep the collectives out of the 'try' and agree on the outcome: catch the failure around the "
                 "work alone, then run the collective on every rank")


def _skipped_by_a_failure(analysis: ModuleAnalysis, site: CallSite) -> Optional[str]:
    """The call follows, in a `try` body, work that can fail on some ranks only (Divergence.raising),
    and a handler swallows the failure: the ranks that failed jump past the call, and no handler
    runs the same collective for them (flashinfer's autotuner: barriers around a benchmark)."""
    collectives = {other.call for other in analysis.calls_in(site.scope)}
    around = set(map(id, analysis.ancestors(site)))
    for statement, reason in analysis.divergence.raising.items():
        suppressing = isinstance(statement, cst.With)  # `with contextlib.suppress(KeyError):`, a handler that passes
        handlers = getattr(statement, "handlers", ())
        if id(statement) not in around or not suppressing and (not handlers or _all_raise(handlers)):
            continue
        index = _body_position(statement, site)
        if index is None or _run_in_a_handler(analysis, site, handlers):
            continue
        work = _work_in(statement.body.body[:index], collectives)
        work = [call for call in work if last_name(call.func) not in _PLAIN_BUILTINS] or work  # the work proper
        loss = None if work else _loss_of_own_batch(analysis, site)
        line = analysis.position(statement).start.line
        block, swallower = ("'with'", f"{_manager(analysis, statement)}()") if suppressing else ("'try'", "the handler")
        if work:
            return (f"{site.api.called} is skipped on ranks where the work before it in the {block} at line {line} "
                    f"fails ({reason}): '{analysis.code(work[0].func)}()' can raise there alone, and {swallower} goes "
                    f"on without it, {_UNEVEN}")
        if loss is not None:
            return (f"{site.api.called} fails on ranks whose own batch makes the backward fail (a NaN under anomaly "
                    f"detection, out of memory) before it synchronises the gradients: '{analysis.code(loss)}' is "
                    f"computed from each rank's own data, and {swallower} of the {block} at line {line} goes on "
                    f"without it, {_UNEVEN}")
    return None


def _work_in(statements: Sequence[cst.CSTNode], collectives: set) -> list[cst.Call]:
    """The calls of `statements` that are no collective of the scope: the work that can fail."""
    return [call for statement in statements for call in calls_in(statement) if call not in collectives]


# Built-ins a message does not name as the work that fails (`len(batch)` before `cholesky(cov)`).
_PLAIN_BUILTINS = frozenset({"len", "print", "int", "float", "str", "bool", "range", "isinstance", "getattr"})


def _manager(analysis: ModuleAnalysis, statement: cst.With) -> str:
    """How the code names the context manager of a `with` (`contextlib.suppress`, `tolerate`)."""
    calls = [item.item.func for item in statement.items if isinstance(item.item, cst.Call)]
    return analysis.code(calls[0]) if calls else "contextlib.suppress"


def _loss_of_own_batch(analysis: ModuleAnalysis, site: CallSite) -> Optional[cst.BaseExpression]:
    """The loss of `loss.backward()` or `accelerator.backward(loss)`, a backward that synchronises
    gradients (DDP), where the loss is computed from the rank's own batch; else None."""
    if site.api.short_name not in _BACKWARDS:
        return None
    func = site.call.func
    loss = argument_value(site.call, 0, "loss") if site.call.args else getattr(func, "value", None)
    if loss is None or not is_own_batch(analysis.divergence.why_at(site.call, loss)):
        return None
    return None if _agreed_before(analysis, site, names_read(loss)) else loss


def _agreed_before(analysis: ModuleAnalysis, site: CallSite, names: set) -> bool:
    """An earlier collective of the scope is handed what the names give (`bad =
    torch.tensor(float(not torch.isfinite(loss)))`, then `dist.all_reduce(bad)`): the ranks agree
    on what would make the work on them fail before they do it."""
    line = analysis.position(site.call).start.line
    derived = set(names)
    for assign in every_node(site.scope, cst.Assign):
        if names_read(assign.value) & derived:
            derived |= {name for target in assign.targets for name in names_read(target.target)}
    return any(analysis.position(other.call).start.line < line and any(
        names_read(arg.value) & derived for arg in other.call.args) for other in analysis.calls_in(site.scope)
        if other.api.short_name not in _BACKWARDS)


def _raised_inside(analysis: ModuleAnalysis, site: CallSite) -> Optional[str]:
    """The call is a project function whose work on an argument can raise before its collective
    (Api.fails_before), handed a rank's own data, in a `try` whose handler goes on: a rank whose
    data makes the work fail leaves through the handler, while the others wait in the collective
    (a planner whose cost estimate has no entry for one rank's longest sequence)."""
    handed = handed_arguments(site.call, site.api.fails_before)
    if not handed:
        return None
    statement = next((node for node in reversed(analysis.ancestors(site)) if isinstance(node, (cst.Try, cst.TryStar))
                      and node.handlers and not _all_raise(node.handlers) and path_to(node.body, site.call)), None)
    if statement is None or _run_in_a_handler(analysis, site, statement.handlers):
        return None
    for name, value in handed:
        why = analysis.divergence.value_at(site.call, value)
        if why is not None and why != CONTROL:  # its data, or a file or value named after the rank
            runs = f" ({site.api.via})" if site.api.via else ""
            return (f"{site.api.called} can raise before its collective{runs} on ranks where its work on '{name}' "
                    f"fails for '{analysis.code(value)}' ({why}), and the handler of the 'try' at line "
                    f"{analysis.position(statement).start.line} goes on without it, while the other ranks wait in "
                    f"it, {_UNEVEN}")
    return None


def _finally_after_a_failure(analysis: ModuleAnalysis, site: CallSite) -> Optional[str]:
    """The call is in the `finally` of a `try` whose body runs collectives on what differs between
    ranks (a rank's own records, handed to a step that parses them): where that work raises on one
    rank, the `finally` runs the call there at once, while the others are still in the body's
    collectives, and the two pair up (torchtitan's `finally: trainer.close()`)."""
    for statement in reversed(analysis.ancestors(site)):
        if not isinstance(statement, (cst.Try, cst.TryStar)) or statement.finalbody is None \
                or not path_to(statement.finalbody, site.call):
            continue
        inside = [other for other in analysis.calls_in(site.scope) if path_to(statement.body, other.call)]
        for other in inside:
            for arg in other.call.args:
                why = analysis.divergence.value_at(other.call, arg.value)
                if why is not None and why != CONTROL:
                    return (f"{site.api.called} runs in the 'finally' of the 'try' at line "
                            f"{analysis.position(statement).start.line}, whose body runs {other.api.short_name} "
                            f"(line {analysis.position(other.call).start.line}) on '{analysis.code(arg.value)}', which "
                            f"differs between ranks ({why}): where that work raises on one rank, it runs this call at "
                            f"once while the others are still in the body's collectives, {_UNEVEN}")
        return None
    return None


def _body_position(statement: cst.CSTNode, site: CallSite) -> Optional[int]:
    """Which statement of a `try` or `with` body holds the call, or None."""
    return next((i for i, part in enumerate(statement.body.body) if part is site.statement or path_to(part, site.call)),
                None)


def _all_raise(handlers) -> bool:
    return all(ends_in(handler.body, cst.Raise) for handler in handlers)


def _run_in_a_handler(analysis: ModuleAnalysis, site: CallSite, handlers) -> bool:
    """A handler runs the same collective for the ranks that failed."""
    return any(other.api.short_name == site.api.short_name and any(path_to(handler, other.call) for handler in handlers)
               for other in analysis.calls_in(site.scope))


# Collectives that pickle what they send on the calling rank before they join the others: the
# position and keyword of what they send.
_PICKLING = {"gather_object": (0, "obj"), "all_gather_object": (1, "obj"), "broadcast_object_list": (0, "object_list"),
             "scatter_object_list": (1, "scatter_object_input_list")}


def _unpicklable_on_some_ranks(analysis: ModuleAnalysis, site: CallSite) -> Optional[str]:
    """An object collective in a `try` body whose handler goes on, sending what differs between
    ranks: it pickles the rank's own objects first, so where they cannot be pickled (a lambda, an
    open file, a lock) it raises on that rank alone, which leaves through the handler while the
    others wait in the collective."""
    sent = argument_value(site.call, *_PICKLING[site.api.short_name]) if site.api.short_name in _PICKLING else None
    if sent is None:
        return None
    why = analysis.divergence.value_at(site.call, sent)
    if why in (None, CONTROL) or not _may_hold_unpicklable(analysis, site, sent, depth=3):
        return None
    for statement in reversed(analysis.ancestors(site)):
        handlers = getattr(statement, "handlers", ())
        if not handlers or _body_position(statement, site) is None:
            continue
        if _all_raise(handlers) or _run_in_a_handler(analysis, site, handlers):
            return None
        return (f"{site.api.called} pickles '{analysis.code(sent)}' on each rank before it joins the others, "
                f"and what it holds differs between ranks ({why}) and can include a lambda, which pickle rejects: the "
                f"call raises on the ranks whose data holds one, and the handler of the 'try' at line "
                f"{analysis.position(statement).start.line} goes on without it, {_UNEVEN}")
    return None


def _may_hold_unpicklable(analysis: ModuleAnalysis, site: CallSite, expr: cst.BaseExpression, depth: int) -> bool:
    """Whether `expr` may hold a lambda or a generator: in a literal or a comprehension, in what a
    name is assigned where the call runs, or stored by the project function it calls (`result[
    "repair"] = lambda text: ...` in a `score(record)` it returns)."""
    if isinstance(expr, (cst.Lambda, cst.GeneratorExp)):
        return True
    if depth == 0:
        return False
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        parts = [element.value for element in expr.elements]
    elif isinstance(expr, cst.Dict):
        parts = [element.value for element in expr.elements if isinstance(element, cst.DictElement)]
    elif isinstance(expr, (cst.ListComp, cst.SetComp)):
        parts = [expr.elt]
    elif isinstance(expr, cst.DictComp):
        parts = [expr.value]
    elif isinstance(expr, cst.Name):
        parts = [value for value in analysis.reaching_values(site, expr) if value is not expr]
    elif isinstance(expr, cst.Call):
        function = analysis.returning_function(expr)
        return function is not None and _stores_a_lambda(function)
    else:
        return False
    return any(_may_hold_unpicklable(analysis, site, part, depth - 1) for part in parts)


def _stores_a_lambda(function: cst.FunctionDef) -> bool:
    """A lambda or generator that the function's own code keeps under an `if` on what it is given
    (`if "\\x00" in text: out["fix"] = lambda t: ...`): some data gets one and some does not. One
    handed to a call is consumed there (`sorted(rows, key=lambda r: r[0])`)."""
    finder = _StoredLambda()
    finder.walk(function.body)
    return finder.found


class _StoredLambda(Visitor):
    def __init__(self) -> None:
        self.found = False
        self._branches = 0

    def visit_If(self, node: cst.If) -> None:
        self._branches += 1

    def leave_If(self, node: cst.If) -> None:
        self._branches -= 1

    def visit_Arg(self, node: cst.Arg) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.found = self.found or self._branches > 0
        return False

    visit_GeneratorExp = visit_Lambda

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested function's own code


# logging's methods that format their arguments only when the record is emitted.
_LOGGING_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception", "log"})


def _formatted_where_logged(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`logger.info("peak %s", meter)` where formatting `meter` runs a collective (its class's
    `__str__` all-reduces) and the module sets its logging level by a test on the rank: logging
    formats the arguments only where the record is emitted, so only those ranks run it."""
    line = analysis.conditions.logging_per_rank
    if not line:
        return
    for scope in (analysis.module, *every_node(analysis.module, cst.FunctionDef)):
        for call in calls_in(scope):
            if not (isinstance(call.func, cst.Attribute) and call.func.attr.value in _LOGGING_METHODS):
                continue
            for arg in call.args[1:]:
                api = analysis.formatting_collective(arg.value, scope) if arg.keyword is None else None
                if api is not None:
                    yield Report(call, f"{analysis.code(call.func)}() formats '{analysis.code(arg.value)}' only where "
                                 f"the record is emitted, and formatting it {api.via or 'runs ' + api.called}, while the "
                                 f"logging level is set by a test on the rank at line {line}: only some ranks run it, "
                                 f"and every rank hangs until the timeout", help=_FORMAT_HELP)
                    break


def _classes_chosen_by_rank(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`reporter.end_step()` where `reporter = StepReporter() if rank == 0 else QuietReporter()`
    (or a factory returns so) and only StepReporter's `end_step` runs a collective: the ranks that
    made the other class never join it."""
    for scope in (analysis.module, *every_node(analysis.module, cst.FunctionDef)):
        for call in calls_in(scope):
            chosen = analysis.rank_chosen_class(call, scope) if isinstance(call.func, cst.Attribute) else None
            if chosen is None:
                continue
            maker = f"{chosen.maker} makes it" if chosen.maker else "it is"
            yield Report(call, f"{analysis.code(call.func)}() runs a collective only on ranks where "
                         f"{analysis.test_phrase(chosen.test, chosen.truth)}: {maker} a {chosen.running} there, whose "
                         f"{call.func.attr.value}() {chosen.api.via or 'runs ' + chosen.api.called}, and a {chosen.other} "
                         f"elsewhere, whose {call.func.attr.value}() runs none, so the other ranks never join it and "
                         "every rank hangs until the timeout",
                         help=f"Run the collective on every rank: let {chosen.other}.{call.func.attr.value}() run it "
                              "too, or call it outside the classes")


def _trainer_loaders_of_uneven_length(analysis: ModuleAnalysis) -> Iterator[Report]:
    """A transformers Trainer subclass's `get_train_dataloader` that returns a loader whose number
    of batches differs between ranks: the Trainer runs one training step, and DDP's gradient
    all-reduce in its backward, per batch (ModuleAnalysis.uneven_trainer_loaders)."""
    for method, loader, why in analysis.uneven_trainer_loaders():
        yield Report(loader, f"{method.name.value}() returns a loader whose length can differ between ranks ({why}), "
                     f"and Trainer.train() runs one training step per batch of it, with DDP's gradient all-reduce in "
                     f"the backward (transformers {apis.TRANSFORMERS}, trainer.py:1612 iterates the loader as "
                     f"returned), {_UNEVEN}",
                     help="Give every rank the same number of batches: prepare the loader with "
                          "self.accelerator.prepare (it shards evenly), or pad the shares to one length")


def _hooks_of_skipped_submodules(analysis: ModuleAnalysis) -> Iterator[Report]:
    """A collective in a gradient hook registered on every parameter of a model whose submodule
    runs on some steps only (analysis.unused_parameters.hooked_submodules, horovod#546)."""
    for found in hooked_submodules(analysis):
        line = analysis.position(found.registration).start.line
        for site in (site for site in analysis.calls if site.scope is found.hook):
            yield Report(site.call, f"{site.api.called} runs in '{found.hook.name.value}', a gradient hook registered "
                         f"on each parameter (line {line}), once per parameter that gets a gradient, and "
                         f"{analysis.code(found.call.func)}() runs only where '{analysis.code(found.test)}' holds, "
                         f"which differs between ranks with their data: a rank whose step skips it runs the hook "
                         f"fewer times, {_UNEVEN}",
                         help="Run the submodule at every step and mask its contribution out of the loss (`loss + "
                              "head(h).sum() * 0`), so that every parameter gets a gradient on every rank")


def _collectives_in_threads(analysis: ModuleAnalysis) -> Iterator[Report]:
    """A collective on the default process group in a function that runs in a thread of its own
    (analysis.threads), while the main thread runs collectives too: each rank issues the two
    threads' calls in the order its own scheduling and clock give (pytorch#175145)."""
    bodies = analysis.once(thread_bodies)
    main = [site for site in analysis.calls if site.scope not in bodies] if bodies else []
    if not main:
        return
    # the main thread's collectives from where a thread is started (`heartbeat.start()`) on
    starts = [analysis.position(call).start.line for call in every_node(analysis.module, cst.Call)
              if isinstance(call.func, cst.Attribute) and call.func.attr.value == "start" and not call.args]
    started = min(starts, default=0)
    after = [other for other in main if analysis.position(other.call).start.line > started]
    other = min(after or main, key=lambda other: analysis.position(other.call).start.line)
    for site in analysis.calls:
        body = bodies.get(site.scope)
        if body is None or site.group is not None:
            continue
        yield Report(site.call, f"{site.api.called} runs in '{site.scope.name.value}', which runs in a thread of its "
                     f"own ({body.how}), on the default process group, which the main thread's {other.api.called} "
                     f"(line {analysis.position(other.call).start.line}) uses too: each rank issues the two threads' "
                     f"collectives in the order its own scheduling and clock give, {_UNEVEN}",
                     help=_THREAD_HELP)


_THREAD_HELP = ("Give the thread a process group of its own, made on every rank before it starts "
                "(`dist.new_group(backend=\"gloo\")`), and pass it as `group=`, or run the collective in the main thread")


_FORMAT_HELP = ("Format it on every rank before the call (`text = str(meter)`, or an f-string), and log the text")


def _exit_skipped_on_failure(analysis: ModuleAnalysis, site: CallSite) -> Optional[str]:
    """The call is in a context manager class's `__exit__`, under a test on the exception it is
    handed (`if exc_type is None:`), and a `with` of that class sits in a `try` whose work can
    fail on some ranks only (Divergence.raising) and whose handler goes on: where the body raised,
    `__exit__` skips the call."""
    scope = site.scope
    klass = analysis.class_of(scope) if isinstance(scope, cst.FunctionDef) and scope.name.value == "__exit__" else None
    exception = {param.name.value for param in scope.params.params[1:]} if klass is not None else set()
    test = next((node.test for node in path_to(scope, site.call) or () if isinstance(node, cst.If)
                 and names_read(node.test) & exception), None)
    if test is None:
        return None
    for entered in every_node(analysis.module, cst.With):
        if not any(isinstance(item.item, cst.Call) and last_name(item.item.func) == klass.name.value
                   for item in entered.items):
            continue
        path = path_to(analysis.module, entered) or ()
        where = next((node for node in reversed(path) if isinstance(node, cst.FunctionDef)), analysis.module)
        raising = analysis.divergence_in(where).raising
        statement = next((node for node in reversed(path) if isinstance(node, (cst.Try, cst.TryStar))
                          and node in raising and path_to(node.body, entered)), None)
        handlers = statement.handlers if statement is not None else ()
        if handlers and not all(ends_in(handler.body, cst.Raise) for handler in handlers):
            reason = raising[statement]
            return (f"{site.api.called} runs in {klass.name.value}.__exit__ only where '{analysis.code(test)}' holds, "
                    f"that is where the 'with' body raised nothing, and the 'with' at line "
                    f"{analysis.position(entered).start.line} is in a 'try' whose handler goes on while {reason}: "
                    f"the ranks that failed skip it, {_UNEVEN}")
    return None


_PER_UPDATE_HELP = ("Give the list state a reduction (dist_reduce_fx='cat') or keep one tensor per rank, so that "
                    "the sync runs the same collectives on every rank")


_CACHE_COMPUTE_HELP = ("Update the metric on every rank in each step (with an empty selection where nothing "
                       "counts), or compute it once after the loop")


def _gathered_per_update(analysis: ModuleAnalysis, site: CallSite) -> Optional[str]:
    """`metric.compute()` of a torchmetrics Metric of the module with a list state and no reduction
    (`add_state("ranked", default=[], dist_reduce_fx=None)`): its sync gathers the list one element
    at a time (torchmetrics 1.9.0, `Metric._sync_dist`), one element per `update()`, so where the
    updates run a different number of times on different ranks, so do the gathers."""
    if site.api.qualified_name != "torchmetrics.metric.Metric.compute" or not isinstance(site.call.func, cst.Attribute):
        return None
    receiver = site.call.func.value
    klass = analysis.local_class_of(receiver, site.scope)
    state = _unreduced_list_state(klass) if klass is not None else None
    if state is None:
        return None
    for update in calls_in(site.scope):
        if update is site.call or not _updates(analysis, update, receiver.value):
            continue
        reason = _runs_unevenly(analysis, site.scope, update)
        if reason is not None:
            line = analysis.position(update).start.line
            return (f"{site.api.called} gathers the list state '{state}' one element at a time (it has no "
                    f"dist_reduce_fx), one element per update, and the update at line {line} runs a different number "
                    f"of times on different ranks ({reason}), {_UNEVEN}")
    return None


def _compute_from_cache(analysis: ModuleAnalysis, site: CallSite) -> Optional[str]:
    """`metric.compute()` in a loop whose every `update()` of that metric runs on some ranks only:
    compute() returns its cached value without syncing when no update ran since its last call
    (torchmetrics 1.9.0, metric.py:688; update() clears the cache, :545; `compute_with_cache=False`
    keeps none, :703), so in that iteration it syncs only where the update ran."""
    if site.api.qualified_name != "torchmetrics.metric.Metric.compute" or not isinstance(site.call.func, cst.Attribute):
        return None
    receiver = site.call.func.value
    loop = next((node for node in reversed(path_to(site.scope, site.call) or ()) if isinstance(node, (cst.For, cst.While))),
                None)
    if loop is None or analysis.made_with(receiver, "compute_with_cache", "False", site.scope):
        return None
    named = analysis.code(receiver)
    updates = [call for call in calls_in(loop.body) if call is not site.call and _updates(analysis, call, named)]
    reasons = [_runs_unevenly(analysis, site.scope, update) for update in updates]
    if not updates or None in reasons:
        return None  # some update runs on every rank in each iteration: every compute() syncs
    line = analysis.position(updates[0]).start.line
    return (f"{site.api.called} syncs only when an update ran since its last call (otherwise it returns its "
            f"cached value), and the update at line {line} runs on some ranks only ({reasons[0]}), {_UNEVEN}")


# torchmetrics' computes that return a metric's cached value, where it was computed after its last
# update (metric.py:688): MetricTracker's compute every tracked epoch's metric (wrappers/tracker.py).
_CACHED_COMPUTES = frozenset({"torchmetrics.metric.Metric.compute",
                              "torchmetrics.wrappers.tracker.MetricTracker.compute",
                              "torchmetrics.wrappers.tracker.MetricTracker.compute_all",
                              "torchmetrics.wrappers.tracker.MetricTracker.best_metric"})


def _computed_alike_before(analysis: ModuleAnalysis, site: CallSite) -> bool:
    """`val = tracker.compute()` on every rank, then `if rank == 0: tracker.best_metric()` with no
    update of `tracker` in between: every metric it computes returns its cached value, and runs no
    collective on the ranks that reach it alone."""
    if site.api.qualified_name not in _CACHED_COMPUTES or not isinstance(site.call.func, cst.Attribute):
        return False
    metric = analysis.code(site.call.func.value)
    line = analysis.position(site.call).start.line
    everywhere = set(analysis.worlds[site.scope])
    before = [analysis.position(other.call).start.line for other in analysis.calls_in(site.scope)
              if other.api.qualified_name in _CACHED_COMPUTES and isinstance(other.call, cst.Call)
              and isinstance(other.call.func, cst.Attribute) and analysis.code(other.call.func.value) == metric
              and set(other.reached) == everywhere and analysis.position(other.call).start.line < line]
    if not before:
        return False
    computed = max(before)
    return not any(_updates(analysis, call, metric) or last_name(call.func) == "increment"
                   and analysis.code(call.func) == f"{metric}.increment"
                   for call in calls_in(site.scope) if computed < analysis.position(call).start.line < line)


def _updates(analysis: ModuleAnalysis, call: cst.Call, metric: str) -> bool:
    """`metric.update(...)`, `metric.forward(...)` or `metric(...)` (its forward updates it)."""
    func = call.func
    target = func.value if isinstance(func, cst.Attribute) and func.attr.value in ("update", "forward") else func
    return analysis.code(target) == metric


def _unreduced_list_state(klass: cst.ClassDef) -> Optional[str]:
    """The name of a state the class adds with an empty list default and `dist_reduce_fx=None`."""
    for call in every_node(klass, cst.Call):
        if last_name(call.func) != "add_state":
            continue
        default, reduction = argument_value(call, 1, "default"), argument_value(call, 2, "dist_reduce_fx")
        name = argument_value(call, 0, "name")
        if isinstance(default, cst.List) and not default.elements and reduction is not None and is_none(reduction) \
                and isinstance(name, cst.SimpleString):
            return name.evaluated_value
    return None


def _runs_unevenly(analysis: ModuleAnalysis, scope: cst.CSTNode, call: cst.Call) -> Optional[str]:
    """Why `call` runs a different number of times on different ranks: it is under a test that
    differs between ranks, after one that skips the rest of a loop's body, or in a loop whose
    length differs; else None."""
    path = (*(path_to(scope, call) or ()), call)
    for index, node in enumerate(path[:-1]):
        if isinstance(node, cst.If) and path[index + 1] is not node.test:
            reason = test_varies(analysis, node.test)
            if reason is not None:
                return reason
        if isinstance(node, (cst.For, cst.While)):
            looped = analysis.divergence.loops.get(node)
            if looped is not None:
                return looped[1]
            body = list(node.body.body) if isinstance(node.body, cst.IndentedBlock) else []
            below = path[index + 2] if index + 2 < len(path) else None  # the statement of the body
            for statement in body[:body.index(below)] if below in body else ():
                if isinstance(statement, cst.If) and (ends_in(statement.body, cst.Continue)
                                                      or ends_in(statement.body, cst.Break)):
                    reason = test_varies(analysis, statement.test)
                    if reason is not None:
                        return reason
    return None


def test_varies(analysis: ModuleAnalysis, test: cst.BaseExpression) -> Optional[str]:
    """Why `test` goes one way on some ranks and the other way elsewhere: a rank test, or an
    operand the data flow recorded (Divergence.tests); else None."""
    tests = analysis.divergence.tests
    reason = next((tests[leaf] for leaf in boolean_leaves(test) if leaf in tests), None)
    return reason or (RANK if analysis.varies_by_rank(test) else None)


_RETRY_HELP = ("Keep the collectives out of the retried function, or agree on the failure first (all_reduce a "
               "flag) so that every rank retries together")


def _retried_on_failure(analysis: ModuleAnalysis, site: CallSite) -> Optional[str]:
    """The call is in a function a retrying decorator calls again when it raises, and the
    function's work can fail on some ranks only: there the collective runs once more."""
    retried = analysis.divergence.retried.get(site.scope)
    if retried is None:
        return _retried_in_a_loop(analysis, site)
    decorator, reason = retried
    return (f"{site.api.called} runs again on ranks where '{site.scope.name.value}' fails ({reason}): "
            f"'@{analysis.code(decorator.decorator)}' calls it again there alone, {_UNEVEN}")


def _retried_in_a_loop(analysis: ModuleAnalysis, site: CallSite) -> Optional[str]:
    """The call is in a `try` that a loop retries (`for attempt in range(3): try: ...; return
    except OSError: sleep(1)`), before work that can fail on some ranks only (Divergence.raising):
    the ranks that failed run the call again, while the others have left the loop (returnn#1829)."""
    ancestors = analysis.ancestors(site)
    collectives = {other.call for other in analysis.calls_in(site.scope)}
    for depth, statement in enumerate(ancestors):
        reason = analysis.divergence.raising.get(statement)
        handlers = getattr(statement, "handlers", ())
        if reason is None or not handlers or _all_raise(handlers):
            continue
        loop = next((node for node in reversed(ancestors[:depth]) if isinstance(node, (cst.For, cst.While))), None)
        index = _body_position(statement, site)
        if loop is None or index is None or not any(ends_in(statement.body, exit) for exit in (cst.Return, cst.Break)):
            continue
        work = _work_in(statement.body.body[index + 1:], collectives)
        if work:
            return (f"{site.api.called} runs again on ranks where the work after it in the 'try' at line "
                    f"{analysis.position(statement).start.line} fails ({reason}): '{analysis.code(work[0].func)}()' "
                    f"can raise there alone, and the loop at line {analysis.position(loop).start.line} retries the "
                    f"'try' there while the other ranks have left it, {_UNEVEN}")
    return None


_SHORT_CIRCUIT_HELP = ("Call it on every rank before the test and combine the results: "
                       "`triggered = accelerator.check_trigger()`, then `if over_budget or triggered:`")


def _short_circuit(analysis: ModuleAnalysis, site: CallSite) -> Optional[str]:
    """The call is the right operand of `or`/`and` (`if over_budget or accelerator.check_trigger():`)
    or an arm of `x if test else y`, and what decides whether Python evaluates it differs between
    ranks: the message, or None."""
    path = path_to(site.statement, site.call, skip_suites=True) or ()
    for node, below in zip(path, (*path[1:], site.call)):
        if isinstance(node, cst.BooleanOperation) and below is node.right:
            guard, skipped_when = node.left, isinstance(node.operator, cst.Or)
            word = "or" if skipped_when else "and"
        elif isinstance(node, cst.IfExp) and below in (node.body, node.orelse):
            guard, skipped_when, word = node.test, below is node.orelse, "if ... else"
        else:
            continue
        reason = analysis.divergence.value_at(site.call, guard) or _rank_reason(analysis, site, guard)
        if reason is not None:
            return (f"{site.api.called} is skipped on ranks where '{analysis.code(guard)}' is "
                    f"{str(skipped_when).lower()}: '{word}' does not evaluate it there, and '{analysis.code(guard)}' "
                    f"can differ between ranks ({reason}), {_UNEVEN}")
    return None


def _rank_reason(analysis: ModuleAnalysis, site: CallSite, test: cst.BaseExpression) -> Optional[str]:
    """RANK where the worlds that reach the call answer `test` differently."""
    answers = {analysis.conditions.evaluate(test, world) for world in site.reached}
    return RANK if {True, False} <= answers else None


def _reaching(site: CallSite) -> str:
    """"update() calls dist.barrier() (x.py:9)"; for a framework call, what the function calls and
    what that runs inside, then "runs it"."""
    return f"{site.api.called} {site.api.via}" if site.api.via else f"{site.api.called} runs it"


def _collective_behind(analysis: ModuleAnalysis, site: CallSite) -> Optional[CallSite]:
    """The collective a call of this module's own function runs (its summary's call chain), as a
    call site of this module, or None where the function lives elsewhere."""
    chain = site.api.via if isinstance(site.api.via, CallChain) else site.api.inside
    if not isinstance(chain, CallChain) or os.path.abspath(chain.analysis.filename) != os.path.abspath(analysis.filename):
        return None
    line = chain.analysis.position(chain.site.call).start.line
    code = chain.analysis.code(chain.site.call)
    return next((inner for inner in analysis.calls if inner.call is not site.call
                 and analysis.position(inner.call).start.line == line and analysis.code(inner.call) == code), None)


def _in_another_arm(analysis: ModuleAnalysis, layout: "_Layout", exit_: Exit, site: CallSite) -> bool:
    """The exit is in another arm of an `if` that holds the call (`if full: ... return` /
    `elif sharded: load(...)`): a rank taking it was not going to reach the call on that pass.
    A loop around both is another matter: the exit skips the call in the following passes."""
    if any(loop in analysis.exits[site.scope].loops.get(site.call, ()) for loop in exit_.loops):
        return False
    call_arms = {id(chain): index for chain, index in layout.enclosing.get(site.statement, [])}
    return any(call_arms.get(id(chain), index) != index
               for chain, index in layout.enclosing.get(exit_.statement, []))


def _rank_sharded_loop(analysis: ModuleAnalysis, site: CallSite):
    """(loop, what decides its trip count, why it differs) for a loop around the call that runs
    a different number of times on different ranks: a `for` over an iterable whose length
    depends on the rank or on data that differs between ranks, a `while` whose test does."""
    if site.group is not None or analysis.dispatched_alike(site.call):
        return None  # the members' ranks against the group's numbering are not known; see dispatched_alike
    for loop in analysis.exits[site.scope].loops.get(site.call, ()):
        if _synchronised_at_the_last_item(analysis, site, loop):
            continue
        iterable = rank_dependent_iterable(loop, analysis.conditions)
        if iterable is not None and iterable not in analysis.divergence.dealt_evenly:
            return loop, iterable, None
        if loop in analysis.divergence.loops:
            return (loop, *analysis.divergence.loops[loop])
    return None


# Lightning's collectives over a collection run one collective per tensor in it and pass anything
# else through as it is (lightning 2.6.6: fabric/fabric.py:679, :708 and pytorch/core/module.py:694,
# `apply_to_collection(data, Tensor, ...)`).
_PER_TENSOR = frozenset({"lightning.fabric.fabric.Fabric.all_gather", "lightning.fabric.fabric.Fabric.all_reduce",
                         "lightning.pytorch.core.module.LightningModule.all_gather"})


def _entries_missing_on_some_ranks(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`out["ref_error"] = None if batch["ref"] is None else err`, then `fabric.all_gather(out)`:
    where the test holds the entry is no tensor, and that rank runs one all_gather fewer
    (pytorch-lightning#7695)."""
    for site in analysis.calls:
        if site.api.qualified_name not in _PER_TENSOR or not isinstance(site.call, cst.Call) or not site.call.args:
            continue
        payload = site.call.args[0].value
        if not isinstance(payload, cst.Name):
            continue
        for entry, test in _entries_none_under_a_test(site.scope, payload.value):
            why = analysis.divergence.value_at(site.call, test)
            if why:
                yield Report(site.call, f"{site.api.called} runs one collective per tensor in '{payload.value}', and "
                             f"its entry {analysis.code(entry)} is None where '{analysis.code(test)}' holds ({why}): "
                             f"there it runs one collective fewer, {_UNEVEN}",
                             help="Give the entry a tensor on every rank (a placeholder with a flag saying it is "
                                  "missing), or gather it apart from the collection")
                break


# What the ranks that lose the race for a path raise: it exists already, or is gone already.
_REMOVALS = frozenset({"remove", "unlink", "rmdir", "rmtree"})


def _paths_every_rank_races_for(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`os.makedirs(out_dir)` without `exist_ok=True` (or `shutil.rmtree(old)`, `open(p, "x")`) of
    a path every rank names alike, run by every rank (under no test that differs between ranks,
    outside a `try`) before a collective, directly (analysis.divergence.races) or in a function of
    the module that does so to its parameter (`export(preds, out_dir)`): the first rank wins and
    every other rank raises, so the collective waits for ranks that are gone (allennlp#3841,
    transformers#20988)."""
    reported: set = set()
    racing: dict = {}  # scope -> its racing calls, found once for all its collectives
    for site in analysis.calls:
        if not isinstance(site.scope, cst.FunctionDef) or site.call not in analysis.divergence.states:
            continue
        if site.scope not in racing:
            racing[site.scope] = list(_racing_calls(analysis, site.scope))
        line = analysis.position(site.call).start.line
        for call, inner, path, handed in racing[site.scope]:
            if call in reported or (handed and analysis.divergence.value_at(site.call, path) is not None) \
                    or not _runs_before(analysis, site.scope, call, line):
                continue
            reported.add(call)
            error = "FileNotFoundError" if last_name(inner.func) in _REMOVALS else "FileExistsError"
            through = "" if inner is call else f" (in {last_name(call.func)}(), line {analysis.position(inner).start.line})"
            named = analysis.code(path) if isinstance(path, cst.SimpleString) else f"'{analysis.code(path)}'"
            yield Report(call, f"{analysis.code(inner.func)}() of {named}{through} runs on every rank, and the path "
                         f"is the same on each: the first rank to get there wins and every other rank raises "
                         f"{error}, so {site.api.called} (line {line}) waits for ranks that are gone and hangs until "
                         f"the timeout",
                         help="Let one rank do it and the others wait for it (a barrier), or pass exist_ok=True "
                              "(ignore_errors=True, missing_ok=True)")


def _paths_removed_under_readers(analysis: ModuleAnalysis) -> Iterator[Report]:
    """`shutil.rmtree(cache)` of a path every rank names alike and reads, with no collective
    between a rank's last read and its removal (analysis.removed_paths): a slower rank finds it
    gone and raises, and the remover waits for it in its next collective."""
    for scope in dict.fromkeys(site.scope for site in analysis.calls if isinstance(site.scope, cst.FunctionDef)):
        collectives = {site.call: site for site in analysis.calls_in(scope)}
        qualified = lambda node: analysis.qualified_names(node, scope)  # noqa: E731
        reads = lambda call, value: any(  # noqa: E731  (a helper that can raise on the path it is handed)
            value is handed for handed in failing_arguments(analysis.conditions, call))
        for removed in removals_under_readers(scope, collectives, qualified, reads):
            states = analysis.divergence.states
            if removed.removal in analysis.divergence.races or removed.waiting not in states or any(
                    analysis.divergence.value_at(removed.waiting, part) is not None
                    for value in made_from(scope, removed.path) for part in (value, *every_node(value, cst.Name))):
                continue  # each rank's own file: `copy_to_local(f"model_rank_{rank}.pt")`
            position = analysis.position
            yield Report(removed.removal, f"{analysis.code(removed.removal.func)}() of '{analysis.code(removed.path)}' "
                         f"may run while other ranks still read it ({analysis.code(removed.read.func)}() at line "
                         f"{position(removed.read).start.line}): no collective between a rank's reads and the "
                         f"removal makes it wait for the others, so a slower rank finds the path gone and raises "
                         f"FileNotFoundError, and {collectives[removed.waiting].api.called} (line "
                         f"{position(removed.waiting).start.line}) waits for it until the timeout",
                         help="Put a barrier between the last read and the removal, and let one rank remove it")


def _racing_calls(analysis: ModuleAnalysis, scope: cst.FunctionDef) -> Iterator[tuple]:
    """(the call in `scope`, the racing call, the path as the scope names it, whether it is handed
    to a function, so that whether it is alike is judged at each collective): the scope's own
    races, and calls of the module's functions that race for the path a parameter names."""
    for call, (raced_in, path) in analysis.divergence.races.items():
        if raced_in is scope and not _tested_first(scope, call, path):
            yield call, call, path, False
    for call in _unconditional_calls(scope.body):
        helper = analysis.own_function(call.func.value) if isinstance(call.func, cst.Name) else None
        handed = dict(bound_arguments(helper, call, False)) if helper is not None else {}
        for inner in _unconditional_calls(helper.body) if handed else ():
            parameter = exclusive_path(inner, lambda made: analysis.qualified_names(made, helper))
            if isinstance(parameter, cst.Call) and last_name(parameter.func) == "Path" and parameter.args:
                parameter = parameter.args[0].value  # `Path(out_dir).mkdir()`
            argument = handed.get(parameter.value) if isinstance(parameter, cst.Name) else None
            if argument is not None:
                yield call, inner, argument, True


def _tested_first(scope: cst.CSTNode, call: cst.Call, path: cst.BaseExpression) -> bool:
    """`if path.is_file(): path.unlink()`, `if not os.path.exists(d): os.makedirs(d)`: under a test
    of the path itself, the race is narrowed to the moment between the test and the call; left alone."""
    named = node_code(path)
    return any(isinstance(node, cst.If) and named in node_code(node.test) for node in path_to(scope, call) or ())


def _runs_before(analysis: ModuleAnalysis, scope: cst.CSTNode, call: cst.Call, line: int) -> bool:
    """Whether the collective at `line` runs after `call`: later in the scope, or in a loop around
    `call` (the next pass)."""
    if analysis.position(call).start.line < line:
        return True
    loops = (node for node in path_to(scope, call) or () if isinstance(node, (cst.For, cst.While)))
    return any(analysis.position(loop).start.line <= line <= analysis.position(loop).end.line for loop in loops)


def _unconditional_calls(body: cst.BaseSuite) -> Iterator[cst.Call]:
    """The calls of the expression statements every run of `body` makes: at its top level or in a
    `with` block (not under an `if`, in a loop or a `try`)."""
    for statement in body.body if isinstance(body, cst.IndentedBlock) else ():
        if isinstance(statement, cst.With):
            yield from _unconditional_calls(statement.body)
        elif isinstance(statement, cst.SimpleStatementLine):
            yield from (small.value for small in statement.body
                        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call))


def _entries_none_under_a_test(scope: cst.CSTNode, name: str) -> Iterator[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(the entry's key, the test) for `name[key] = None if test else value` (either
    arm None) and `name = {key: None if test else value, ...}` in `scope`."""
    for node in every_node(scope, cst.Assign):
        for target in node.targets:
            target = target.target
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value == name:
                test = _none_on_one_arm(node.value)
                if test is not None:
                    yield target.slice[0].slice, test
            elif isinstance(target, cst.Name) and target.value == name and isinstance(node.value, cst.Dict):
                for element in node.value.elements:
                    test = _none_on_one_arm(element.value) if isinstance(element, cst.DictElement) else None
                    if test is not None:
                        yield element.key, test


def _none_on_one_arm(value: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The test of `None if test else x` or `x if test else None`."""
    if isinstance(value, cst.IfExp) and is_none(value.body) != is_none(value.orelse):
        return value.test
    return None


def _synchronised_at_the_last_item(analysis: ModuleAnalysis, site: CallSite, loop) -> bool:
    """`for i, chunk in enumerate(chunks): with fabric.no_backward_sync(model, enabled=i < len(chunks) - 1):
    fabric.backward(...)`: the gradients are all-reduced once, at the last item, however many there are;
    so is a collective under `if i == len(chunks) - 1:`."""
    counter, iterable = _enumeration(loop) if isinstance(loop, cst.For) else (None, None)
    if counter is None:
        return False
    around = analysis.ancestors(site)
    inside = around[next((i for i, node in enumerate(around) if node is loop), len(around)) + 1:]
    if any(isinstance(node, cst.If) and below is node.body
           and at_the_last_item(_one_value(analysis, node.test, site.scope), counter, iterable)
           for node, below in zip(inside, inside[1:])):
        return True
    if site.api.short_name not in _BACKWARDS:
        return False
    if any(enabled is not None and _before_the_last(enabled, counter, iterable)
           for _, enabled in _sync_switches(analysis, site)):
        return True
    # `ctx = nullcontext() if last else model.no_sync()`, then `with ctx:`, with `last = i == len(micro) - 1`
    for node in inside:
        for item in node.items if isinstance(node, cst.With) else ():
            chosen = _one_value(analysis, item.item, site.scope)
            if isinstance(chosen, cst.IfExp) and _no_sync(chosen.orelse) and not _no_sync(chosen.body) \
                    and at_the_last_item(_one_value(analysis, chosen.test, site.scope), counter, iterable):
                return True
    return False


def _one_value(analysis: ModuleAnalysis, expr: cst.BaseExpression, scope: cst.CSTNode) -> cst.BaseExpression:
    """What a name holds where the scope assigns it once (`ctx = ... if last else ...`), else `expr`."""
    values = analysis.values_in_scope(expr.value, scope) if isinstance(expr, cst.Name) else []
    return values[0] if len(values) == 1 else expr


def _no_sync(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and last_name(expr.func) in _SYNC_SWITCHES


def _enumeration(loop: cst.For) -> tuple[Optional[str], Optional[str]]:
    """('i', 'chunks') for `for i, chunk in enumerate(chunks):`, else (None, None)."""
    iterable, target = loop.iter, loop.target
    if isinstance(iterable, cst.Call) and last_name(iterable.func) == "enumerate" and iterable.args \
            and isinstance(iterable.args[0].value, cst.Name) and isinstance(target, cst.Tuple) \
            and target.elements and isinstance(target.elements[0].value, cst.Name):
        return target.elements[0].value.value, iterable.args[0].value.value
    return None, None


def _before_the_last(test: cst.BaseExpression, counter: Optional[str], items: Optional[str]) -> bool:
    """`i < len(chunks) - 1`, `i != len(chunks) - 1`, `i + 1 < len(chunks)`: true but at the last item."""
    found = compared_with_the_last(test, counter, items) if counter and items else None
    return found in ((cst.LessThan, True), (cst.NotEqual, True))


def _set_ordered_loop(analysis: ModuleAnalysis, site: CallSite):
    """(loop, its iterable, why) for a loop around the call over a set whose order differs
    between processes: each rank runs the collectives in its own order."""
    for loop in analysis.exits[site.scope].loops.get(site.call, ()):
        if loop in analysis.divergence.orders:
            return (loop, *analysis.divergence.orders[loop])
    return None


_ARM_ORDER_HELP = "Issue the collectives in one order on every rank: the same sequence in both arms, or after the branch"


def _arms_out_of_order(analysis: ModuleAnalysis, site: CallSite, layout: "_Layout") -> Optional[str]:
    """The arms of a branch that differs between ranks run the same collectives in another order
    (`broadcast` then `reduce` where the process samples, `reduce` then `broadcast` elsewhere):
    each rank's n-th call pairs with the others' n-th, so the kinds or groups do not match. Said
    once, of the call where the later arm first parts from the sequence of an earlier one."""
    for chain, index in layout.enclosing.get(site.statement, ()):
        found = _parting_step(analysis, site.scope, layout, chain, index)
        if found is not None and found[0] is site.call:
            return found[1]
    return None


def _helpers_out_of_order(analysis: ModuleAnalysis) -> Iterator[Report]:
    """_arms_out_of_order where the later arm first parts at a call of a project function that runs
    collectives over a group of its own choosing (no site of its own: `sync_stats(local, groups)`
    before `sync_grads(model, groups)` on the ranks with a long batch, after it elsewhere)."""
    layouts: dict = {}
    for scope, calls in analysis.helper_collective_calls().items():
        layout = _layout(layouts, scope)
        for call, statement in calls:
            for chain, index in layout.enclosing.get(statement, ()):
                found = _parting_step(analysis, scope, layout, chain, index) if index else None
                if found is not None and found[0] is call:
                    yield Report(call, found[1], help=_ARM_ORDER_HELP)


def _parting_step(analysis: ModuleAnalysis, scope: cst.CSTNode, layout: "_Layout", chain: "_Chain",
                  index: int) -> Optional[tuple[cst.Call, str]]:
    """(the call, the message) where arm `index` of a chain whose tests differ between ranks first
    parts from an earlier arm that runs the same collectives in another order, or None."""
    sequences = [_arm_sequence(analysis, scope, layout, chain, arm) for arm in range(len(chain.arms))]
    mine = sequences[index]
    for theirs in sequences[:index] if mine is not None else ():
        if theirs is None or sorted(_kinds(mine)) != sorted(_kinds(theirs)):
            continue
        parting = next((k for k, (a, b) in enumerate(zip(_kinds(mine), _kinds(theirs))) if a != b), None)
        # (whether the tests differ between ranks last: it may need a divergence pass of the scope)
        if parting is not None and _apart_by_chain(analysis, scope, chain):
            return mine[parting].call, _arm_order_message(analysis, chain, index, mine, theirs)
    return None


def _apart_by_chain(analysis: ModuleAnalysis, scope: cst.CSTNode, chain: "_Chain") -> bool:
    """The chain's tests differ between ranks, and no collective before it made what they read
    agree (`dist.all_reduce(longest, op=MAX, group=g)` then `if longest.item() >= LONG:`: the
    divergence analysis does not count a reduction over a group, whose members it cannot tell)."""
    tests = analysis.divergence.tests if scope in analysis.worlds else analysis.handed_divergence(scope).tests
    decided = any(analysis.varies_by_rank(test) for test in chain.tests)
    if not decided and not any(leaf in tests for test in chain.tests for leaf in boolean_leaves(test)):
        return False
    start = analysis.position(chain.top).start.line
    agreed = {site.payload.value for site in analysis.calls_in(scope) if site.api.short_name in _AGREEING
              and isinstance(site.payload, cst.Name) and analysis.position(site.call).start.line < start}
    return decided or not any(names_read(test) & agreed for test in chain.tests)


# Collectives after which every rank holds what the first one (or all together) sent.
_AGREEING = frozenset({"broadcast", "all_reduce", "broadcast_object_list"})


@dataclass(frozen=True)
class _Step:
    """A collective, or a call of a project function that runs some, in a sequence."""

    call: cst.Call
    statement: cst.CSTNode
    kind: tuple  # (name, group)
    called: str


def _arm_sequence(analysis: ModuleAnalysis, scope: cst.CSTNode, layout: "_Layout", chain: "_Chain",
                  arm: int) -> Optional[list]:
    """The collective steps of one arm in the order they run, or None where one sits deeper
    than the arm's own statements (a loop or a branch inside decides how often it runs). Found
    once per arm: every call of the arm asks."""
    key = (id(chain), arm)
    if key not in layout.sequences:
        layout.sequences[key] = _steps_of_arm(analysis, scope, layout, chain, arm)
    return layout.sequences[key]


def _steps_of_arm(analysis: ModuleAnalysis, scope: cst.CSTNode, layout: "_Layout", chain: "_Chain",
                  arm: int) -> Optional[list]:
    statements = chain.arms[arm][2]
    steps = [_Step(s.call, s.statement, (s.api.short_name, group_key(s.group) if s.group is not None else None),
                   s.api.called) for s in analysis.calls_in(scope)]
    steps += [_Step(call, statement, (last_name(call.func), None), f"{last_name(call.func)}()")
              for call, statement in analysis.helper_collective_calls().get(scope, ())]
    inside = [step for step in steps
              if any(outer is chain and index == arm for outer, index in layout.enclosing.get(step.statement, ()))]
    if any(step.statement not in statements for step in inside):
        return None
    order = {statement: position for position, statement in enumerate(statements)}
    return sorted(inside, key=lambda step: (order[step.statement], _call_order(step)))


def _call_order(step: _Step) -> int:
    """Where the step's call comes among its statement's calls (source order, no positions)."""
    return next((k for k, call in enumerate(calls_in(step.statement)) if call is step.call), 0)


def _kinds(sequence: list) -> list:
    return [step.kind for step in sequence]


def _arm_order_message(analysis: ModuleAnalysis, chain: "_Chain", index: int, own: list, others: list) -> str:
    first = next(step for step, a, b in zip(own, _kinds(own), _kinds(others)) if a != b)
    return (f"{first.called} runs at another point on different ranks: on ranks where "
            f"{_phrase(analysis, *_arm_test(chain, index))} the branch at line {analysis.position(chain.top).start.line} "
            f"runs {_sequence_in_order(analysis, own)}, while the others run {_sequence_in_order(analysis, others)}: "
            f"each call pairs with the others' call at the same point, a different collective or group, and every "
            f"rank hangs until the timeout")


def _sequence_in_order(analysis: ModuleAnalysis, steps: list) -> str:
    return " then ".join(f"{step.kind[0]} (line {analysis.position(step.call).start.line})" for step in steps)


def _split_within_group(site: CallSite, reached: set, missing: set) -> bool:
    """A collective over a group involves only its members. It runs on some of them only when
    the ranks that skip it are told apart by their rank in that very group; a test on the global
    rank (`if rank in (0, 1):` before a collective over `new_group([0, 1])`) may select exactly
    the members, which the code does not show."""
    focus = next(iter(reached)).group
    if focus is None or focus != group_key(site.group):
        return False
    reached_group_ranks = {world.group_rank for world in reached}
    return not any(world.group_rank in reached_group_ranks for world in missing)


class _NestedCollectives:
    """Per scope, the short names of the collectives called in the functions defined inside it,
    at any depth: one walk of each scope for the whole module (see ModuleAnalysis.once), not one
    per call."""

    def __init__(self, analysis: ModuleAnalysis) -> None:
        self._names: dict[cst.CSTNode, set[str]] = {}

    def names(self, analysis: ModuleAnalysis, scope: cst.CSTNode) -> set[str]:
        found = self._names.get(scope)
        if found is None:
            found = self._names[scope] = {other.api.short_name for function in _functions_within(scope)
                                          for other in analysis.calls_in(function)}
        return found


def _functions_within(scope: cst.CSTNode) -> set:
    collector = _FunctionCollector(scope)
    collector.walk(scope)
    return collector.found


class _FunctionCollector(Visitor):
    """The functions defined inside a scope, at any depth."""

    def __init__(self, scope: cst.CSTNode) -> None:
        self.scope = scope
        self.found: set = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node is not self.scope:
            self.found.add(node)


# -- where the call stands in its scope ------------------------------------------------------

@dataclass
class _Chain:
    """An `if`/`elif`/`else` chain: the top `If` statement and each arm's statements."""

    top: cst.If
    arms: list = field(default_factory=list)  # (the If owning the arm, True for its body, statements)
    tests: list = field(default_factory=list)


@dataclass
class _Layout:
    """Which chain arms enclose each statement of a scope, and every chain's tests."""

    enclosing: dict = field(default_factory=dict)  # statement -> [(chain, arm index)], outermost first
    chains: list = field(default_factory=list)
    sequences: dict = field(default_factory=dict)  # (chain's id, arm index) -> _arm_sequence's answer

    @classmethod
    def of(cls, scope: cst.CSTNode) -> "_Layout":
        layout = cls()
        layout._block(scope_statements(scope), [])
        return layout

    def _block(self, statements, stack: list) -> None:
        for statement in statements:
            self.enclosing[statement] = stack
            if isinstance(statement, cst.If):
                self._chain(statement, stack)
            elif not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                for body in _bodies(statement):
                    self._block(body, stack)

    def _chain(self, top: cst.If, stack: list) -> None:
        chain = _Chain(top)
        self.chains.append(chain)
        node: Optional[cst.If] = top
        while node is not None:
            chain.tests.append(node.test)
            chain.arms.append((node, True, _suite(node.body)))
            if isinstance(node.orelse, cst.Else):
                chain.arms.append((node, False, _suite(node.orelse.body)))
            node = node.orelse if isinstance(node.orelse, cst.If) else None
        for index, (_, _, body) in enumerate(chain.arms):
            self._block(body, [*stack, (chain, index)])

    def within(self, chain: _Chain) -> set:
        """The statements inside a chain's arms, at any depth."""
        return {statement for statement, stack in self.enclosing.items()
                if any(outer is chain for outer, _ in stack)}


def _suite(body: cst.BaseSuite):
    return (body,) if isinstance(body, cst.SimpleStatementSuite) else body.body


def _bodies(statement: cst.CSTNode):
    """The statement lists directly inside a compound statement other than an `if`."""
    for name in ("body", "orelse", "finalbody"):
        part = getattr(statement, name, None)
        if isinstance(part, cst.BaseSuite):
            yield _suite(part)
        elif part is not None and isinstance(getattr(part, "body", None), cst.BaseSuite):
            yield _suite(part.body)
    for clause in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
        yield _suite(clause.body)


def _arm_test(chain: _Chain, index: int) -> tuple[cst.BaseExpression, bool]:
    """The test that decides an arm, and its value there (`else`: the last test fails)."""
    owner, polarity, _ = chain.arms[index]
    return owner.test, polarity


# -- messages --------------------------------------------------------------------------------

def _decorated_message(analysis: ModuleAnalysis, site: CallSite) -> str:
    decorator = analysis.code(site.rank_decorator.decorator)
    owner = f"'{site.scope.name.value}'" if isinstance(site.scope, cst.FunctionDef) else "the function"
    return (f"{site.api.called} is called in {owner}, which @{decorator} runs on some ranks "
            f"only: {_HANG}")


def _hook_message(analysis: ModuleAnalysis, site: CallSite) -> str:
    return (f"{site.api.called} is called in '{site.scope.name.value}', which {analysis.some_ranks_hook(site.scope)}: "
            f"{_HANG}")


def _main_first_message(analysis: ModuleAnalysis, site: CallSite) -> str:
    items = [item.item for item in site.main_process_first.items]
    item = next((i for i in items if "main_process_first" in analysis.code(i)), items[0])
    return (f"{site.api.called} is called inside 'with {analysis.code(item)}:': the main rank "
            "runs it while the others wait at the block's barrier, and every rank hangs until the timeout")


def _branch_message(analysis: ModuleAnalysis, site: CallSite, layout: _Layout) -> str:
    condition = _condition(analysis, site, layout)
    handled = _handler_around(analysis, site)
    where = f"ranks where {condition}" if condition else handled or "some ranks"
    hang = f"{site.api.called} {site.api.via}, and {_HANG}" if site.api.via else _HANG
    if site.api.memoised and site.api.via:  # its first call runs the collective; a later one, nothing
        hang = (f"{site.api.called} {site.api.via} on its first call only ({site.api.memoised}), and the other "
                f"ranks make that call at another point or never, {_UNEVEN}")
    if site.api.steers:  # `control.should_training_stop = True`, `return None, None, None`
        return (f"{site.api.called} {site.api.steers} only on {where}: the other processes' Trainers go on "
                f"without it, and every rank hangs until the timeout")
    missing = set(analysis.worlds[site.scope]) - set(site.reached)
    sequences = _sequences(analysis, site, set(site.reached), missing, lambda other: True)
    return f"{site.api.called} runs only on {where}: {hang}{sequences}"


def _handler_around(analysis: ModuleAnalysis, site: CallSite) -> Optional[str]:
    """"the ranks where the 'try' at line 48 raises (...)": the call is in a handler of a `try`
    that can raise on some ranks only."""
    for statement, reason in analysis.divergence.raising.items():
        if any(path_to(handler, site.statement) is not None for handler in getattr(statement, "handlers", ())):
            return f"the ranks where the 'try' at line {analysis.position(statement).start.line} raises ({reason})"
    return None


def _sequences(analysis: ModuleAnalysis, site: CallSite, ones: set, others: set, runs) -> str:
    """" (those ranks run all_reduce (line 30) then barrier (line 41), while the others run barrier
    (line 41) only)": the collectives of the call's scope that one rank of each class reaches, in
    source order; `runs(other)` says whether the first class still runs `other` there. Empty
    where the scope holds a loop around the call (its sequence repeats)."""
    if not ones or not others or analysis.exits[site.scope].loops.get(site.call):
        return ""
    one, other = min(ones, key=_world_order), min(others, key=_world_order)
    scope_sites = [s for s in analysis.calls_in(site.scope) if not analysis.exits[site.scope].loops.get(s.call)]
    first = [s for s in scope_sites if one in s.reached and runs(s)]
    second = [s for s in scope_sites if other in s.reached]
    return f" (those ranks run {_sequence(analysis, first)}, while the others run {_sequence(analysis, second)})"


def _world_order(world) -> tuple:
    return (world.rank, world.group_rank, world.data is False)


def _sequence(analysis: ModuleAnalysis, sites: list) -> str:
    if not sites:
        return "no collective here"
    starts = sorted((analysis.position(s.call).start.line, analysis.position(s.call).start.column, s.api.short_name)
                    for s in sites)
    named = [f"{name} (line {line})" for line, _, name in starts]
    return named[0] + " only" if len(named) == 1 else " then ".join(named)


_FLAG_HELP = ("Decide on every process alike: reduce the condition across processes (all_reduce it with MAX, or "
              "broadcast one process's decision) before setting the flag")


_NONE_RETURN_HELP = ("Return the same on every process: tensors for every batch (empty ones, or a loss of zero, "
                     "where nothing counts), so that every process runs the same gathers")


def _branch_help(site: CallSite, layout: _Layout) -> str:
    if site.api.steers:
        return _FLAG_HELP if site.api.qualified_name in apis.CONTROL_FLAGS else _NONE_RETURN_HELP
    if layout.enclosing.get(site.statement):
        return "Call it on every rank: move it out of the branch"
    return "Call it on every rank: move it before the rank-dependent early exit"


def _exit_message(analysis: ModuleAnalysis, site: CallSite, exit_: Exit, layout: _Layout) -> str:
    line = analysis.position(exit_.node).start.line
    where = _exit_condition(analysis, site, exit_, layout)
    where = f"ranks where {where}" if where else "some ranks"
    later = " in the following iterations" if exit_.kind == "break" or (
        exit_.kind != "continue" and exit_.loops) else ""
    order = analysis.exits[site.scope].order
    sequences = "" if exit_.loops else _sequences(analysis, site, set(exit_.reached), set(site.reached) - exit_.reached,
                                                  lambda other: order.get(other.call, 0) < exit_.order)
    if exit_.failing:
        return (f"{site.api.called} is skipped on {where}: the '{exit_.kind}' at line {line} "
                f"stops only those processes, while the other ranks call it and wait for them until "
                f"the timeout (or until the launcher notices the failure){sequences}")
    return (f"{site.api.called} is skipped{later} on {where}: the '{exit_.kind}' at line "
            f"{line} is taken only there, while the other ranks go on calling it, {_UNEVEN}{sequences}")


def _exit_condition(analysis: ModuleAnalysis, site: CallSite, exit_: Exit, layout: _Layout) -> Optional[str]:
    """The innermost rank test around the exit that some ranks fail, or the `try` whose handler
    holds it when the work in that `try` can fail on some ranks only."""
    worlds = analysis.worlds[site.scope]
    if exit_.kind == "assert":
        return _phrase(analysis, exit_.node.test, False)
    arms = [_arm_test(chain, index) for chain, index in reversed(layout.enclosing.get(exit_.statement, []))]
    for judge in (analysis.conditions.evaluate, analysis.conditions.decide):  # the rank's own tests first
        for test, truth in arms:
            if any(judge(test, world) is (not truth) for world in worlds):
                return _phrase(analysis, test, truth)
    for statement, reason in analysis.divergence.raising.items():
        if any(path_to(handler, exit_.statement) is not None for handler in getattr(statement, "handlers", ())):
            line = analysis.position(statement).start.line
            return f"the 'try' at line {line} raises ({reason})"
    return None


def _phrase(analysis: ModuleAnalysis, test: cst.BaseExpression, truth: bool) -> str:
    """test_phrase, with why the test can differ between ranks when no rank test decides it."""
    reason = next((analysis.divergence.tests[leaf] for leaf in boolean_leaves(test)
                   if leaf in analysis.divergence.tests), None)
    phrase = analysis.test_phrase(test, truth)
    return phrase if reason is None or reason == RANK else f"{phrase} ({reason})"


def _loop_message(analysis: ModuleAnalysis, site: CallSite, loop, decider, reason: Optional[str]) -> str:
    line = analysis.position(loop).start.line
    if isinstance(loop, cst.While):
        count = f"runs while '{analysis.code(decider)}' holds, which can differ between ranks ({reason})"
    elif reason is None:
        count = f"iterates over '{analysis.code(decider)}', whose length depends on the rank"
    else:
        count = f"iterates over '{analysis.code(decider)}', whose length can differ between ranks ({reason})"
    return f"{site.api.called} runs a different number of times on different ranks: the loop at line {line} {count}, {_UNEVEN}"


def _unresumed_message(analysis: ModuleAnalysis, site: CallSite, skipped: resumption.Unresumed) -> str:
    name = skipped.function.name.value
    consumer = analysis.position(skipped.consumer).start.line
    stop = analysis.position(skipped.stop).start.line
    if skipped.context_manager:
        return (f"{site.api.called} runs after the 'yield' of context manager '{name}', only where the body of "
                f"the 'with' at line {consumer} finishes: an exception there is thrown in at 'yield' and skips it, "
                f"and {skipped.what} can fail on some ranks only ({skipped.reason}), caught by the 'try' at line {stop}: "
                f"those ranks never run it, {_UNEVEN}")
    kind = "return" if isinstance(skipped.stop, cst.Return) else "break"
    return (f"{site.api.called} runs after the last 'yield' of generator '{name}', only where the loop at line "
            f"{consumer} runs it to the end: its '{kind}' (line {stop}) leaves the generator suspended at 'yield', "
            f"and {skipped.what} can differ between ranks ({skipped.reason}), so the ranks that stop early never "
            f"run it and the ranks' calls stop pairing up: every rank hangs until the timeout")


def _order_message(analysis: ModuleAnalysis, site: CallSite, loop, iterable, reason: str) -> str:
    line = analysis.position(loop).start.line
    return (f"{site.api.called} runs in a different order on different ranks: the loop at line {line} iterates "
            f"over '{analysis.code(iterable)}' ({reason}), so each rank's calls pair with other items' calls "
            f"(a size mismatch aborts, equal sizes mix the values silently)")


def _condition(analysis: ModuleAnalysis, site: CallSite, layout: _Layout) -> Optional[str]:
    """"'accelerator.is_main_process' is true": the rank test that separates the ranks that
    reach the call from those that do not, preferring the branches that enclose it."""
    worlds = analysis.worlds[site.scope]
    reached = set(site.reached)
    enclosing = [_arm_test(chain, index) for chain, index in reversed(layout.enclosing.get(site.statement, []))]
    others = [(test, truth) for chain in layout.chains for test in chain.tests for truth in (True, False)]
    for test, truth in [*enclosing, *others]:
        values = [analysis.conditions.evaluate(test, world) for world in worlds]
        if None not in values and {w for w, v in zip(worlds, values) if v == truth} == reached:
            return analysis.test_phrase(test, truth)
    # The innermost test that can differ between ranks, not a setup check inside it (`if
    # dist.is_initialized():` under `if path.exists():`).
    varying = [arm for arm in enclosing if test_varies(analysis, arm[0]) is not None]
    if varying or enclosing:
        return _phrase(analysis, *(varying or enclosing)[0])
    return None


# -- the fix: move the call after the branch --------------------------------------------------

def _move_after_branch(analysis: ModuleAnalysis, site: CallSite, layout: _Layout) -> Optional[Fix]:
    stack = layout.enclosing.get(site.statement)
    if not stack or not _is_whole_line_call(site):
        return None
    chain, index = stack[-1]
    body = chain.arms[index][2]
    if body[-1] is not site.statement or not _movable(analysis, site, layout, chain):
        return None
    lines = _moved_lines(analysis, site.statement, chain.top)
    if lines is None:
        return None
    start = analysis.position(site.statement).start.line
    end = analysis.position(site.statement).end.line
    chain_end = analysis.position(chain.top).end.line
    indent = analysis.line_text(start)[: analysis.position(site.statement).start.column]
    kept = [f"{indent}pass"] if len(body) == 1 else []
    after = [analysis.line_text(line) for line in range(end + 1, chain_end + 1)]
    content = "".join(f"{line}\n" for line in (*kept, *after, *lines))
    edit = Edit(start, 1, chain_end + 1, 1, content)
    return Fix(UNSAFE, f"Move `{site.api.short_name}()` after the branch", (edit,))


def _is_whole_line_call(site: CallSite) -> bool:
    """The call is the whole of a one-statement line: `call(...)` or `x = call(...)`."""
    statement = site.statement
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    return isinstance(small, (cst.Expr, cst.Assign, cst.AnnAssign)) and small.value is site.call


def _movable(analysis: ModuleAnalysis, site: CallSite, layout: _Layout, chain: _Chain) -> bool:
    """After the branch the call runs on every rank, with arguments bound on every rank."""
    inside = layout.within(chain)
    if any(_exits(statement) for statement in inside):
        return False
    if not _decided_by_rank(analysis, site, chain):
        return False  # `if rank == 0 and step % n == 0:`: moved out, it would run every step
    if any(other is not site and other.api.short_name == site.api.short_name
           for statement in inside for other in analysis.calls_at(statement)):
        return False
    entry = _environments_at(analysis, site.scope, chain.top)
    if set(entry) != set(analysis.worlds[site.scope]):
        return False  # some ranks never reach the branch itself
    return not any(any(d.kind == UNBOUND for d in env.get(name, ()))
                   for name in names_read(site.call) for env in entry.values())


def _decided_by_rank(analysis: ModuleAnalysis, site: CallSite, chain: _Chain) -> bool:
    """Every test of the chain is decided by the rank alone, so the rank is all it keeps apart."""
    worlds = analysis.worlds[site.scope]
    return all(analysis.conditions.evaluate(test, world) is not None
               for test in chain.tests for world in worlds)


def _exits(statement: cst.CSTNode) -> bool:
    return isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and any(
        isinstance(small, (cst.Return, cst.Raise, cst.Break, cst.Continue)) for small in statement.body)


def _environments_at(analysis: ModuleAnalysis, scope: cst.CSTNode, statement: cst.CSTNode) -> dict:
    """World -> the definitions reaching `statement`, for the worlds that reach it."""
    found: dict = {}

    def observe(world, node, env) -> None:
        if node is statement:  # twice inside a loop: the second visit sees the loop's own definitions
            found[world] = merge_envs((found.get(world, {}), env))

    walk_scope(scope, analysis.worlds[scope], analysis.conditions, observe, analysis.bindings)
    return found


def _moved_lines(analysis: ModuleAnalysis, statement: cst.SimpleStatementLine, top: cst.If) -> Optional[list]:
    """The statement's lines re-indented to the `if`'s level, or None when that could change a
    multi-line string."""
    where = analysis.position(statement)
    code = analysis.code(statement)
    if where.end.line > where.start.line and ('"""' in code or "'''" in code):
        return None
    arm_indent = analysis.line_text(where.start.line)[: where.start.column]
    top_indent = analysis.line_text(analysis.position(top).start.line)[: analysis.position(top).start.column]
    lines = [analysis.line_text(line) for line in range(where.start.line, where.end.line + 1)]
    if any(line.strip() and not line.startswith(arm_indent) for line in lines):
        return None
    return [top_indent + line[len(arm_indent):] if line.strip() else line for line in lines]
