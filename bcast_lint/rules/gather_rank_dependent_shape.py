from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from bcast_lint.analysis import apis, frameworks
from bcast_lint.analysis.divergence import CONTROL, OWN_SHARE, generates_uneven_lengths, is_data_reason
from bcast_lint.analysis.expressions import argument as call_argument, argument_value, last_name, method_name
from bcast_lint.analysis.module import CallSite, ModuleAnalysis
from bcast_lint.analysis.ranks import boolean_leaves, integer_literal
from bcast_lint.analysis.walk import children, every_node, path_to
from bcast_lint.rules.base import Invalid, Report, Rule, Valid
from bcast_lint.rules.collective_on_some_ranks import AGREED_ITEMS


# A stream of rows of their own lengths, padded per batch by a collator, trained with a Trainer.
_STREAM = ("""
    import torch
    from torch.utils.data import IterableDataset
    from transformers import Trainer, TrainingArguments
    class Stream(IterableDataset):
        def __iter__(self):
            for n in (3, 5, 4, 7):
                yield {"input_ids": list(range(n))}
    def collate(rows):
        width = max(len(r["input_ids"]) for r in rows)
        return {"input_ids": torch.tensor([r["input_ids"] + [0] * (width - len(r["input_ids"]))
                                           for r in rows])}
    def main(model):
        args = TrainingArguments(output_dir="out", max_steps=3)
        Trainer(model=model, args=args, train_dataset=Stream(), data_collator=collate).train()
    """)


# A model sized by the vocabulary of the rank's own lines, then prepared.
_VOCAB = ("""
    import torch
    from accelerate import Accelerator
    LINES = ["a b", "b c d", "e"]
    def main():
        accelerator = Accelerator()
        with accelerator.split_between_processes(LINES) as mine:
            vocab = sorted({w for line in mine for w in line.split()})
        model = torch.nn.Embedding(len(vocab), 8)
        model = accelerator.prepare(model)
    """)


# A prediction writer gathering the rows of its epoch (lightning#5493).
_WRITER = ("""
    import torch
    from lightning.pytorch.callbacks import BasePredictionWriter
    class Writer(BasePredictionWriter):
        def write_on_epoch_end(self, trainer, pl_module, predictions, batch_indices):
            rows = torch.cat(predictions)
            every = pl_module.all_gather(rows)
            if trainer.is_global_zero:
                torch.save(every, "scores.pt")
    """)


@dataclass(frozen=True)
class _Gather:
    """Where a gathering collective takes its input, and its per-rank buckets if the caller
    gives them (None: the collective allocates them like the local input)."""

    input_position: int
    input_keyword: str
    buckets_keyword: Optional[str] = None


_TORCH_GATHERS = {
    "all_gather": _Gather(1, "tensor", "tensor_list"),
    "all_gather_into_tensor": _Gather(1, "input_tensor"),
}
_ACCELERATE_GATHERS = {
    "accelerate.utils.gather": _Gather(0, "tensor"),
    "accelerate.utils.operations.gather": _Gather(0, "tensor"),
    "Accelerator.gather": _Gather(0, "tensor"),
    "Accelerator.gather_for_metrics": _Gather(0, "input_data"),
}
# Lightning's gathers stack what torch.distributed.nn's all_gather gathers into buckets shaped like
# the local tensor (lightning 2.6.6, fabric/utilities/distributed.py:247).
_LIGHTNING_GATHERS = {
    "lightning.pytorch.core.module.LightningModule.all_gather": _Gather(0, "data"),
    "lightning.fabric.fabric.Fabric.all_gather": _Gather(0, "data"),
}
# Reductions combine the ranks' tensors element by element: they need one shape everywhere too.
_TORCH_REDUCTIONS = {"all_reduce": _Gather(0, "tensor"), "reduce": _Gather(0, "tensor"),
                     # without split sizes, each rank's input is cut into equal pieces for the others
                     "all_to_all_single": _Gather(1, "input")}
_ACCELERATE_REDUCTIONS = {
    "accelerate.utils.reduce": _Gather(0, "tensor"),
    "accelerate.utils.operations.reduce": _Gather(0, "tensor"),
    "Accelerator.reduce": _Gather(0, "tensor"),
}
# Functions and methods whose result has a data-dependent number of elements.
_DATA_SIZED = {"nonzero", "masked_select", "unique", "unique_consecutive", "argwhere"}
# Methods and torch functions that return a boolean mask of their input's shape.
_MASK_METHODS = {"gt", "lt", "ge", "le", "eq", "ne", "greater", "less", "isnan", "isinf", "isfinite",
                 "isneginf", "isposinf", "logical_not", "logical_and", "logical_or", "logical_xor", "bool"}
_MASK_COMPARISONS = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual,
                     cst.Equal, cst.NotEqual)
# Methods that keep the number of elements of their receiver.
_SIZE_KEEPING = {"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "long", "int", "bool",
                 "type", "detach", "clone", "contiguous", "flatten", "ravel", "abs", "neg", "exp",
                 "log", "sigmoid", "softmax", "log_softmax", "squeeze", "unsqueeze", "view", "reshape"}
_ELEMENTWISE = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)
_MAX_DEPTH = 3


class GatherRankDependentShape(Rule):
    """
    ## What it does
    Flags a gather of a tensor whose length plainly depends on each rank's data or rank, into
    buckets of one fixed shape: `dist.all_gather(buckets, x)` with buckets made alike
    (`[torch.zeros_like(x) for _ in range(world_size)]`), `dist.all_gather_into_tensor`,
    `accelerator.gather`, `accelerator.gather_for_metrics`, `accelerate.utils.gather` and Lightning's
    `self.all_gather`/`fabric.all_gather` (which allocate buckets shaped like the local tensor);
    and a reduction of such a tensor (`dist.all_reduce`, `dist.reduce`, `accelerator.reduce`,
    `accelerate.utils.reduce`), which combines the ranks' tensors element by element. The tensor is one that is

    - indexed by a boolean mask: `x[x > 0]`, `logits[labels != -100]`, `x[mask]` with
      `mask = scores > threshold`;
    - the result of `nonzero`, `masked_select`, `unique` (its counts too), `argwhere`, or of
      `bincount` without `minlength`;
    - a strided slice starting at the rank, `x[rank::world_size]`, whose length differs between
      ranks unless `len(x)` is a multiple of the world size;
    - what a model's `generate()` returns (without `min_new_tokens`/`min_length`), the model's own
      or a project class's, directly or as the items of a list made of its results: generation
      stops where each rank's sequences end, so the sequences' length differs between ranks;

    or such a value converted, moved, reshaped or combined element-wise (`x[mask].float() * 2`);
    or any value whose length the divergence analysis finds differs between ranks: a slice bounded by
    a rank's own count (`ids[:, :max_len]` with `max_len` from the local batch), a rank's piece of a
    split (`torch.split(x, n)[rank]`), a list filled under a condition that differs between ranks,
    the `predictions` a Lightning `BasePredictionWriter.write_on_epoch_end` is handed (Lightning
    deals a prediction loader unpadded, so each rank holds its own share of the rows).
    A gather of a tensor of fixed size (a model output of a fixed batch size, a padded tensor, a
    reduction) is not reported, nor is `all_gather` into buckets sized per rank (`[torch.zeros(n)
    for n in sizes]`).

    Also flagged: `dist.all_to_all_single(out, x, output_split_sizes=counts, input_split_sizes=counts)`
    with `counts` of the rank's own data (`torch.bincount(expert_of).tolist()`): it expects from each
    rank what it sends that rank, while the others send what their own counts say (measured with
    gloo on 2 processes: `48 vs 16. Received data size doesn't match expected size`). And
    `dist.all_to_all_single(recv, buf)` without split sizes of a buffer whose size differs between
    ranks (a dropless capacity from the rank's own routing, `torch.zeros(E, int(counts.max()), D)`):
    each rank expects equal pieces of its own size (measured: `144 vs 112. Received data size
    doesn't match expected size`).

    It also flags a collator that pads each batch to its own longest row (`width = max(len(r["ids"])
    for r in rows)`, `pad_sequence(...)`), handed with an IterableDataset of the module's own to a
    transformers Trainer, or to a DataLoader that accelerate prepares: accelerate then dispatches
    the batches, and process 0 concatenates one batch per process, which raises where their widths
    differ, while the others wait in its broadcast (transformers#26548). `dispatch_batches=False`
    or `split_batches=True` anywhere in the file turns that off.

    And it flags a module made with a count that differs between ranks (`TinyLM(len(vocab))`, the
    vocabulary of the rank's own lines) and then wrapped in DDP (accelerate's `prepare`, Fabric's
    `setup`, `DistributedDataParallel(...)`): DDP's constructor gathers every rank's parameter
    shapes and raises where they differ. So does a module whose parameters a test on the rank's
    own data changes before the wrap: frozen (`p.requires_grad_(False)`, which DDP leaves out), a
    submodule assigned anew, resized embeddings (apex#149: a few-shot shard that freezes the
    backbone).

    ## Why is this bad?
    A gather moves the same number of bytes from every rank: each bucket must have exactly the
    shape of what that rank sends. A reduction of 3 elements on one rank and 2 on the other,
    measured with gloo, hands the shorter rank a partly reduced tensor and leaves the other waiting
    until the timeout. Measured with gloo on 2 processes, `dist.all_gather(buckets,
    x[mask])` where the mask selects a different count on each rank, into `zeros_like` buckets,
    aborts with `… 14 vs 10. Received data size doesn't match expected size`; NCCL may hang or
    gather garbage. Accelerate's `gather` checks shapes only with `ACCELERATE_DEBUG_MODE=1`. A test
    on one process, or on ranks whose data happens to give equal counts, passes.

    ## Example
    ```python
    confident = scores[scores > threshold]
    everything = accelerator.gather(confident)
    ```

    ## Use instead
    ```python
    confident = scores[scores > threshold]
    padded = accelerator.pad_across_processes(confident, pad_index=-1)
    everything = accelerator.gather(padded)
    everything = everything[everything != -1]
    ```
    or gather Python objects: `dist.all_gather_object(gathered, confident.tolist())`.

    ## Fix safety
    No fix: padding needs a pad value that cannot occur in the data, and switching to an object
    gather changes the transport and the result's type; both are the author's choice.

    ## References
    - [torch.distributed.all_gather](https://pytorch.org/docs/stable/distributed.html#torch.distributed.all_gather)
    - [Accelerator.pad_across_processes](https://huggingface.co/docs/accelerate/package_reference/accelerator#accelerate.Accelerator.pad_across_processes)
    """

    code = "BCL015"
    VALID = (
        # A buffer of a fixed capacity, written into row by row: one size on every rank.
        Valid("""
            def dispatch(h, route):
                buf = h.new_zeros(2, 6, 4)
                for e in range(2):
                    rows = h[route == e][:6]
                    buf[e, : rows.shape[0]] = rows
                recv = torch.empty_like(buf)
                dist.all_to_all_single(recv, buf)
                return recv
            """),
        # One capacity every rank agreed on (the largest): buffers of one size everywhere.
        Valid("""
            def exchange(x, route):
                counts = torch.bincount(route, minlength=2)
                capacity = counts.max().reshape(1)
                dist.all_reduce(capacity, op=dist.ReduceOp.MAX)
                buf = torch.zeros(2, int(capacity), 4)
                recv = torch.empty_like(buf)
                dist.all_to_all_single(recv, buf)
                return recv
            def main():
                g = torch.Generator().manual_seed(1000 + rank)
                x = torch.randn(12, 4, generator=g)
                return exchange(x, x.argmax(dim=1) % 2)
            """),
        # Uneven pieces by design, with the sizes exchanged first.
        Valid("""
            def main():
                g = torch.Generator().manual_seed(1000 + rank)
                x = torch.randn(int(torch.randint(4, 9, (1,), generator=g)), 4)
                sent = torch.tensor([x.shape[0] // 2, x.shape[0] - x.shape[0] // 2])
                received = torch.empty_like(sent)
                dist.all_to_all_single(received, sent)
                out = x.new_empty(int(received.sum()), 4)
                dist.all_to_all_single(out, x, output_split_sizes=received.tolist(), input_split_sizes=sent.tolist())
            """),
        # The vocabulary of all the lines; a width read off the rank's own batch.
        # The rows padded to the longest share first; each rank's count; each rank's rows saved apart.
        # Frozen by a test on the whole dataset, alike everywhere, or on a configuration flag.
        # A row-parallel layer: each rank's columns of the input times its rows of the weight, a
        # partial sum of one shape on every rank.
        Valid("""
            SPLIT = [12, 4]
            def load_shard(weight, cols):
                return weight[cols].clone()
            def layer(x, weight):
                start = sum(SPLIT[:rank])
                shard = load_shard(weight, list(range(start, start + SPLIT[rank])))
                partial = x[:, start:start + SPLIT[rank]] @ shard
                dist.all_reduce(partial)
                return partial
            """),
        # One piece per process of a table of 16 rows: taken as written for the job.
        Valid("""
            VOCAB = 16
            def table():
                t = torch.full((VOCAB, VOCAB), -5.0)
                return t
            def f():
                world = dist.get_world_size()
                shard = torch.chunk(table(), world)[rank].clone()
                parts = [torch.zeros_like(shard) for _ in range(world)]
                dist.all_gather(parts, shard)
            """),
        Valid("from torch.nn.parallel import DistributedDataParallel as DDP\n"
              "from torch.utils.data import DistributedSampler\ndef main(data, model, args):\n"
              "    sampler = DistributedSampler(data)\n    labels = torch.stack([data[i][1] for i in sampler])\n"
              "    every = data.tensors[1]\n    if len(every) / len(every.unique()) < 8:\n"
              "        for p in model[0].parameters():\n            p.requires_grad_(False)\n    return DDP(model)"),
        Valid("from torch.nn.parallel import DistributedDataParallel as DDP\n"
              "from torch.utils.data import DistributedSampler\ndef main(data, model, args):\n"
              "    sampler = DistributedSampler(data)\n    labels = torch.stack([data[i][1] for i in sampler])\n"
              "    if args.freeze_backbone:\n        model.backbone.requires_grad_(False)\n"
              "        model.head = torch.nn.Linear(8, 2)\n"
              "    return DDP(model)"),
        Valid(_WRITER.replace("every = pl_module.all_gather(rows)",
                              "counts = pl_module.all_gather(torch.tensor(len(rows)))\n"
                              "            pad = rows.new_zeros(int(counts.max()) - len(rows), *rows.shape[1:])\n"
                              "            every = pl_module.all_gather(torch.cat([rows, pad]))")),
        Valid(_WRITER.replace("pl_module.all_gather(rows)", "pl_module.all_gather(torch.tensor(len(rows)))")),
        Valid(_WRITER.replace("every = pl_module.all_gather(rows)", "every = rows")),
        Valid(_VOCAB.replace("for line in mine for w", "for line in LINES for w")),
        Valid(_VOCAB.replace("model = torch.nn.Embedding(len(vocab), 8)",
                             "x = next(iter(loader))\n        model = torch.nn.Linear(x.shape[1], 8)")),
        # Each process draws its own batches; a map-style dataset; one fixed width.
        Valid(_STREAM.replace('max_steps=3', 'max_steps=3, accelerator_config={"dispatch_batches": False}')),
        Valid(_STREAM.replace("class Stream(IterableDataset):", "class Stream(torch.utils.data.Dataset):")),
        Valid(_STREAM.replace('max(len(r["input_ids"]) for r in rows)', "8")),
        # Each rank's own items kept where every rank holds them: as many on every rank.
        Valid(AGREED_ITEMS),
        # The top k of a masked selection, with k agreed on first (the smallest every rank can give).
        Valid("K = 3\ndef hardest(scores, labels):\n    negatives = scores[labels == 0]\n"
              "    k = torch.tensor([min(K, negatives.numel())])\n    dist.all_reduce(k, op=dist.ReduceOp.MIN)\n"
              "    return negatives.topk(int(k.item())).values\ndef f():\n    scores, labels = load_shard(rank)\n"
              "    hard = hardest(scores, labels)\n    bank = [torch.zeros_like(hard) for _ in range(2)]\n"
              "    dist.all_gather(bank, hard)"),
        # Split sizes received from the others first, or alike on every rank.
        Valid("def dispatch(tokens, expert_of):\n    sent = torch.bincount(expert_of, minlength=2)\n"
              "    received = torch.empty_like(sent)\n    dist.all_to_all_single(received, sent)\n"
              "    out = torch.zeros(int(received.sum()), 4)\n"
              "    dist.all_to_all_single(out, tokens, output_split_sizes=received.tolist(), "
              "input_split_sizes=sent.tolist())"),
        Valid("def dispatch(tokens):\n    even = [2, 2]\n    out = torch.zeros(4, 4)\n"
              "    dist.all_to_all_single(out, tokens, output_split_sizes=even, input_split_sizes=even)"),
        # Counts of every class, present or not; a sum; a list made of one size, filled in place.
        Valid("dist.all_reduce(torch.bincount(labels, minlength=10))"),
        Valid("total = scores[scores > 0.5].sum()\ndist.all_reduce(total)"),
        Valid("def confirm(counts):\n    dist.all_reduce(torch.tensor(counts))\ndef f(shards):\n    counts = [0] * 4\n"
              "    for i in range(rank, 8, 2):\n        if not shards[i]:\n            continue\n"
              "        counts[i // 2] = len(shards[i])\n    confirm(counts)"),
        # One logit per row picked by an index tensor (colossalai 0.5.0 loss_2d.py), then a masked write.
        Valid("def f(logits, targets, start, end):\n    target_mask = (targets < start) | (targets > end)\n"
              "    masked_target = targets.clone() - start\n    masked_target[target_mask] = 0\n"
              "    rows = torch.arange(start=0, end=logits.size()[0])\n"
              "    predicted = logits[rows, masked_target]\n    predicted[target_mask] = 0.0\n"
              "    dist.all_reduce(predicted)"),
        # One length per generated sequence: as many on every rank as there were prompts.
        Valid("def collect(model, batch):\n    ids = model.generate(batch)\n"
              "    lengths = torch.tensor([len(x) for x in ids])\n    return accelerator.gather(lengths)"),
        Valid("logits = model(batch)\nall_logits = accelerator.gather(logits)"),
        Valid("confident = scores[scores > 0.5]\npadded = accelerator.pad_across_processes(confident)\n"
              "everything = accelerator.gather(padded)"),
        Valid("x = torch.rand(8)\nbuckets = [torch.zeros_like(x) for _ in range(2)]\ndist.all_gather(buckets, x)"),
        Valid("total = scores[scores > 0.5].sum()\nall_totals = accelerator.gather(total)"),
        Valid("sel = scores[scores > 0.5]\nbuckets = [torch.zeros(int(n)) for n in sizes]\ndist.all_gather(buckets, sel)"),
        Valid("sel = scores[scores > 0.5]\ndist.all_gather(buckets, sel)"),
        Valid("gathered = [None, None]\ndist.all_gather_object(gathered, scores[scores > 0.5].tolist())"),
        Valid("row = x[rank]\nout = accelerator.gather(row)"),
        Valid("part = x[rank * 4:(rank + 1) * 4]\nout = accelerator.gather(part)"),
        Valid("kept = scores[idx]\nout = accelerator.gather(kept)"),
        Valid("out = accelerator.gather_for_metrics(scores[scores > 0.5], use_gather_object=True)"),
        Valid("generated = model.generate(ids, max_new_tokens=32)\n"
              "generated = accelerator.pad_across_processes(generated, dim=1, pad_index=0)\n"
              "out = accelerator.gather(generated)"),
        Valid("generated = model.generate(ids, min_new_tokens=32, max_new_tokens=32)\nout = accelerator.gather(generated)"),
        # The bound is agreed on first: every rank slices to the longest length.
        Valid("def f(loader):\n    for batch in loader:\n        max_len = batch['mask'].sum(1).max()\n"
              "        dist.all_reduce(max_len, op=dist.ReduceOp.MAX)\n        ids = batch['ids'][:, :max_len]\n"
              "        out = [torch.zeros_like(ids) for _ in range(2)]\n        dist.all_gather(out, ids)"),
        Valid("mask = scores > 0.5\nout = accelerator.gather(torch.where(mask, scores, 0.0))"),
        # A helper that keeps every element of a rank's own predictions (sorted): one length everywhere.
        Valid("def ranked(scores):\n    return torch.tensor(sorted(scores.tolist()))\ndef f(model, loader):\n"
              "    for batch in loader:\n        preds = ranked(model(batch))\n"
              "        out = [torch.empty_like(preds) for _ in range(2)]\n        dist.all_gather(out, preds)"),
        # The same filter over a table every rank holds alike.
        Valid("def confident(scores, threshold):\n    kept = []\n    for s in scores.tolist():\n"
              "        if s > threshold:\n            kept.append(s)\n    return torch.tensor(kept)\ndef f(table):\n"
              "    preds = confident(table, 0.5)\n    out = [torch.empty_like(preds) for _ in range(2)]\n"
              "    dist.all_gather(out, preds)"),
        # The usual hook keeps the shape it was handed (an argmax over the vocabulary).
        Valid("""
            from transformers import Trainer
            def to_ids(logits, labels):
                return logits.argmax(dim=-1)
            def main(model, args, data):
                Trainer(model=model, args=args, eval_dataset=data, preprocess_logits_for_metrics=to_ids).evaluate()
            """),
        # The same predictions joined whole (every batch as long on every rank), or joined along
        # another dimension.
        Valid("""
            import torch
            import torch.distributed as dist
            def evaluate(model, loader):
                preds, rows = [], []
                for batch in loader:
                    preds.append(model(batch).argmax(-1))
                    rows.append(model(batch)[batch["mask"]].sum().reshape(1))
                preds, rows = torch.cat(preds), torch.cat(rows)
                out = [torch.zeros_like(preds) for _ in range(dist.get_world_size())]
                dist.all_gather(out, preds)
                sums = [torch.zeros_like(rows) for _ in range(dist.get_world_size())]
                dist.all_gather(sums, rows)
            """),
    )
    INVALID = (
        # Each rank's embedding has as many rows as its own words: DDP's shape check fails.
        Invalid(_VOCAB, expected_message="'torch.nn.Embedding(len(vocab), 8)' is made with 'len(vocab)', which differs "
                "between ranks (it holds this process's own share of the items), and accelerator.prepare() wraps "
                "it in DistributedDataParallel, whose constructor gathers every rank's parameter shapes and "
                "raises where they differ (torch 2.13.0, nn/parallel/distributed.py "
                "_verify_param_shape_across_processes)",
                range=(8, 13, 8, 46)),
        # accelerate dispatches an IterableDataset's batches: process 0 joins batches of their own widths.
        Invalid(_STREAM, expected_message="'collate' pads each batch to its own longest row ('max(len(r[\"input_ids\"]) "
                "for r in rows)'), and accelerate dispatches the batches of the IterableDataset 'Stream': process "
                "0 draws one batch per process and concatenates them (accelerate 1.15.0, data_loader.py:842), "
                "which raises there where their widths differ, while the other processes wait for their slice in "
                "its broadcast",
                range=(9, 13, 9, 51)),
        # A helper's top k of a masked selection of a rank's own batch (k = min(K, what the mask kept)).
        Invalid("K = 3\ndef hardest(scores, labels):\n    negatives = scores[labels == 0]\n"
                "    return negatives.topk(min(K, negatives.numel())).values\ndef f():\n"
                "    scores, labels = load_shard(rank)\n    hard = hardest(scores, labels)\n"
                "    bank = [torch.zeros_like(hard) for _ in range(2)]\n    dist.all_gather(bank, hard)",
                expected_message="dist.all_gather() gathers hard, whose length differs between ranks (hardest() "
                "returns as many elements as it keeps of what it is handed, which differs between ranks "
                "('hardest()' returns something else on some ranks, as a boolean mask keeps a data-dependent number "
                "of elements)), into buckets of one shape: where the counts differ, gloo aborts (\"Received data "
                "size doesn't match expected size\")", range=(9, 27, 9, 31)),
        Invalid("def dispatch(tokens):\n    expert_of = load_routes(rank)\n"
                "    counts = torch.bincount(expert_of, minlength=2).tolist()\n    out = torch.zeros(sum(counts), 4)\n"
                "    dist.all_to_all_single(out, tokens, output_split_sizes=counts, input_split_sizes=counts)",
                expected_message="dist.all_to_all_single() receives output_split_sizes=counts, the sizes this rank "
                "sends, which differ between ranks (it holds the data of the rank it was given): each rank gets from "
                "the others what their own sizes say, so where the counts differ gloo aborts (\"Received data size "
                "doesn't match expected size\")", range=(5, 60, 5, 66)),
        Invalid("classes, counts = torch.unique(labels, return_counts=True)\n"
                "totals = accelerator.reduce(counts, reduction='sum')",
                expected_message="accelerator.reduce() reduces counts, whose length differs between ranks "
                "(torch.unique(), nonzero() and bincount() without minlength return a data-dependent number of "
                "elements): where the lengths differ, the rank with fewer elements goes on with a partly reduced "
                "tensor and the other waits until the timeout", range=(2, 29, 2, 35)),
        Invalid("dist.all_reduce(torch.bincount(labels))",
                expected_message="dist.all_reduce() reduces torch.bincount(labels), whose length differs between "
                "ranks (torch.unique(), nonzero() and bincount() without minlength return a data-dependent number "
                "of elements): where the lengths differ, the rank with fewer elements goes on with a partly reduced "
                "tensor and the other waits until the timeout", range=(1, 17, 1, 39)),
        # A dict's keys are those each rank's data gives it.
        Invalid("def confirm(counts):\n    dist.all_reduce(torch.tensor(counts))\ndef f(shards):\n    counts = {}\n"
                "    for i in range(rank, 8, 2):\n        if not shards[i]:\n            continue\n"
                "        counts[i // 2] = len(shards[i])\n    confirm(list(counts.values()))",
                expected_message="dist.all_reduce() reduces torch.tensor(counts), whose length differs between "
                "ranks (line 17 passes 'list(counts.values())', and it is computed from the rank): where the lengths differ, the rank with fewer elements goes on with a partly "
                "reduced tensor and the other waits until the timeout", range=(2, 21, 2, 41)),
        Invalid("confident = scores[scores > 0.5]\neverything = accelerator.gather(confident)",
                expected_message='accelerator.gather() gathers confident, whose length differs between ranks '
                '(a boolean mask keeps a data-dependent number of elements), into buckets '
                'shaped like the local tensor: where the counts differ, gloo aborts '
                '("Received data size doesn\'t match expected size")', range=(2, 33, 2, 42)),
        Invalid("mask = labels != -100\npreds = accelerator.gather_for_metrics(logits[mask].argmax(-1))",
                expected_message='accelerator.gather_for_metrics() gathers logits[mask].argmax(-1), whose '
                'length differs between ranks (a boolean mask keeps a data-dependent number '
                'of elements), into buckets shaped like the local tensor: where the counts '
                'differ, gloo aborts ("Received data size doesn\'t match expected size")', range=(2, 40, 2, 63)),
        Invalid("local = scores[scores > t]\nbuckets = [torch.zeros_like(local) for _ in range(dist.get_world_size())]\n"
                "dist.all_gather(buckets, local)",
                expected_message='dist.all_gather() gathers local, whose length differs between ranks (a '
                'boolean mask keeps a data-dependent number of elements), into buckets of one'
                ' shape: where the counts differ, gloo aborts ("Received data size doesn\'t '
                'match expected size")', range=(3, 26, 3, 31)),
        Invalid("mine = items[rank::world_size]\nout = gather(mine)",
                expected_message='gather() gathers mine, whose length differs between ranks '
                '(items[rank::world_size] has a different length on each rank unless the '
                'length divides evenly by the stride), into buckets shaped like the local '
                'tensor: where the counts differ, gloo aborts ("Received data size doesn\'t '
                'match expected size")', range=(2, 14, 2, 18)),
        Invalid("idx = torch.nonzero(flags).flatten()\nout = torch.zeros(64, dtype=torch.long)\n"
                "dist.all_gather_into_tensor(out, idx)",
                expected_message='dist.all_gather_into_tensor() gathers idx, whose length differs between '
                'ranks (torch.nonzero() returns a data-dependent number of elements), into an'
                ' output tensor of fixed size: where the counts differ, gloo aborts '
                '("Received data size doesn\'t match expected size")', range=(3, 34, 3, 37)),
        Invalid("sel = x[(x > 0) & ~torch.isnan(x)].float() * 2\nout = accelerator.gather(sel)",
                expected_message='accelerator.gather() gathers sel, whose length differs between ranks (a '
                'boolean mask keeps a data-dependent number of elements), into buckets shaped'
                ' like the local tensor: where the counts differ, gloo aborts ("Received data'
                ' size doesn\'t match expected size")', range=(2, 26, 2, 29)),
        Invalid("out = accelerator.gather(x.unique())",
                expected_message='accelerator.gather() gathers x.unique(), whose length differs between ranks '
                '(.unique() returns a data-dependent number of elements), into buckets shaped'
                ' like the local tensor: where the counts differ, gloo aborts ("Received data'
                ' size doesn\'t match expected size")', range=(1, 26, 1, 36)),
        Invalid("sel = x[x > 0]\ndist.all_gather([torch.empty_like(sel)] * 2, sel)",
                expected_message='dist.all_gather() gathers sel, whose length differs between ranks (a boolean'
                ' mask keeps a data-dependent number of elements), into buckets of one shape:'
                ' where the counts differ, gloo aborts ("Received data size doesn\'t match '
                'expected size")', range=(2, 46, 2, 49)),
        Invalid("generated = model.generate(batch['input_ids'], max_new_tokens=32)\n"
                "out = accelerator.gather(generated)",
                expected_message="accelerator.gather() gathers generated, whose length differs between ranks "
                "(.generate() stops where each rank's sequences end, so the length of what it returns depends on "
                "the rank's prompts), into buckets shaped like the local tensor: where the counts differ, gloo "
                "aborts (\"Received data size doesn't match expected size\")", range=(2, 26, 2, 35)),
        Invalid("def f(loader):\n    for batch in loader:\n        max_len = int(batch['mask'].sum(1).max())\n"
                "        ids = batch['ids'][:, :max_len]\n        out = [torch.zeros_like(ids) for _ in range(2)]\n"
                "        dist.all_gather(out, ids)",
                expected_message="dist.all_gather() gathers ids, whose length differs between ranks (it is computed "
                "from this rank's own batch of data), into buckets of one shape: where the counts differ, gloo aborts "
                "(\"Received data size doesn't match expected size\")", range=(6, 30, 6, 33)),
        Invalid("mine = torch.split(x, 4)[dist.get_rank()]\nout = [torch.zeros_like(mine) for _ in range(2)]\n"
                "dist.all_gather(out, mine)",
                expected_message="dist.all_gather() gathers mine, whose length differs between ranks (each rank takes "
                "its own share of the items, and the shares differ in length unless they divide evenly), into buckets "
                "of one shape: where the counts differ, gloo aborts (\"Received data size doesn't match expected "
                "size\")", range=(3, 22, 3, 26)),
        Invalid("def f(lm, prompts):\n    generations = [lm.generate(p) for p in prompts]\n"
                "    for seq in generations:\n        accelerator.gather(seq)",
                expected_message="accelerator.gather() gathers seq, whose length differs between ranks (.generate() "
                "stops where each rank's sequences end, so the length of what it returns depends on the rank's "
                "prompts), into buckets shaped like the local tensor: where the counts differ, gloo aborts "
                "(\"Received data size doesn't match expected size\")", range=(4, 28, 4, 31)),
        # A helper of the project that keeps what passes a filter of a rank's own predictions.
        Invalid("def confident(scores):\n    kept = []\n    for s in scores.tolist():\n        if s > 0.5:\n"
                "            kept.append(s)\n    return torch.tensor(kept)\ndef f(model, loader):\n    for batch in loader:\n"
                "        preds = confident(model(batch))\n        out = [torch.empty_like(preds) for _ in range(2)]\n"
                "        dist.all_gather(out, preds)",
                expected_message="dist.all_gather() gathers preds, whose length differs between ranks (confident() "
                "returns as many elements as it keeps of what it is handed, which differs between ranks (it is "
                "computed from this rank's own batch of data)), into buckets of one shape: where the counts differ, "
                "gloo aborts (\"Received data size doesn't match expected size\")", range=(11, 30, 11, 35)),
        # The Trainer gathers what its preprocess_logits_for_metrics hook returns: here one row per
        # labelled position of the process's own batch.
        Invalid("""
            from transformers import Trainer
            def keep_labelled(logits, labels):
                return logits[labels != -100]
            def main(model, args, data):
                Trainer(model=model, args=args, eval_dataset=data, preprocess_logits_for_metrics=keep_labelled).evaluate()
            """, expected_message="keep_labelled() returns 'logits[labels != -100]', whose length differs between "
                "ranks (a boolean mask keeps a data-dependent number of elements), and the Trainer gathers what "
                "preprocess_logits_for_metrics returns from every process (transformers 5.25.0, trainer.py:3065): "
                "where the counts differ, gloo aborts (\"Received data size doesn't match expected size\")",
                range=(3, 12, 3, 34)),
        # Each batch's masked predictions appended, then joined: as many as the rank's data keeps.
        Invalid("""
            import torch
            import torch.distributed as dist
            def evaluate(model, loader):
                preds = []
                for batch in loader:
                    preds.append(model(batch).argmax(-1)[batch["mask"]])
                preds = torch.cat(preds)
                out = [torch.zeros_like(preds) for _ in range(dist.get_world_size())]
                dist.all_gather(out, preds)
            """, expected_message="dist.all_gather() gathers preds, whose length differs between ranks (a boolean "
                "mask keeps a data-dependent number of elements), into buckets of one shape: where the counts differ, "
                "gloo aborts (\"Received data size doesn't match expected size\")", range=(9, 26, 9, 31)),
        # Lightning deals a prediction loader unpadded: each rank's rows are its own share.
        Invalid(_WRITER, expected_message="pl_module.all_gather() gathers rows, whose length differs between ranks "
                "(Lightning deals the prediction loader unpadded (UnrepeatedDistributedSamplerWrapper, lightning "
                "2.6.6, trainer/connectors/data_connector.py:241), so the rank's predictions hold its own share "
                "of the rows), into buckets shaped like the local tensor: where the counts differ, gloo aborts "
                "(\"Received data size doesn't match expected size\")",
                range=(6, 38, 6, 42)),
        # Parameters frozen on the ranks whose own shard holds few rows per class (apex#149).
        Invalid("from torch.nn.parallel import DistributedDataParallel as DDP\n"
                "from torch.utils.data import DistributedSampler\ndef main(data, model, args):\n"
                "    sampler = DistributedSampler(data)\n    labels = torch.stack([data[i][1] for i in sampler])\n"
                "    if len(labels) / len(labels.unique()) < 8:\n        for p in model[0].parameters():\n"
                "            p.requires_grad_(False)\n    return DDP(model)",
                expected_message="'p.requires_grad_(False)' changes the parameters of 'model' only on ranks "
                "where 'len(labels) / len(labels.unique()) < 8' holds (torch.unique(), nonzero() and bincount() "
                "without minlength return a data-dependent number of elements), and DDP() (line 17) wraps it in "
                "DistributedDataParallel, whose constructor gathers every rank's parameter shapes and raises "
                "where they differ (torch 2.13.0, nn/parallel/distributed.py "
                "_verify_param_shape_across_processes)",
                range=(8, 13, 8, 36)),
        # A position table grown in the handler of a forward that fails on one rank's longest row.
        Invalid("from torch.nn.parallel import DistributedDataParallel as DDP\ndef main(load, model, world):\n"
                "    rows = load()[rank::world]\n    longest = max(rows, key=len)\n    try:\n        model(longest)\n"
                "    except IndexError:\n"
                "        grown = torch.nn.Embedding(len(longest), 8)\n        model.pos = grown\n    return DDP(model)",
                expected_message="'model.pos = grown' changes the parameters of 'model' only on ranks where "
                "the 'try' at line 13 fails (work in the 'try' block can fail on some ranks only), and DDP() "
                "(line 18) wraps it in DistributedDataParallel, whose constructor gathers every rank's parameter "
                "shapes and raises where they differ (torch 2.13.0, nn/parallel/distributed.py "
                "_verify_param_shape_across_processes)",
                range=(9, 9, 9, 26)),
        # A table of 15 rows in one piece per process: the pieces differ.
        Invalid("""
            VOCAB = 15
            def table():
                t = torch.full((VOCAB, VOCAB), -5.0)
                return t
            def f():
                world = dist.get_world_size()
                shard = torch.chunk(table(), world)[rank].clone()
                parts = [torch.zeros_like(shard) for _ in range(world)]
                dist.all_gather(parts, shard)
            """, expected_message="dist.all_gather() gathers shard, whose length differs between ranks (each "
                "rank takes its own share of the items, and the shares differ in length unless they divide "
                "evenly), into buckets of one shape: where the counts differ, gloo aborts (\"Received data size "
                "doesn't match expected size\")",
                range=(9, 28, 9, 33)),
        # A dropless capacity from this rank's own routing (DeepSpeed#6809's shape, blind44).
        Invalid("""
            def main():
                g = torch.Generator().manual_seed(1000 + rank)
                x = torch.randn(12, 4, generator=g)
                counts = torch.bincount(x.argmax(dim=1), minlength=2)
                capacity = int(counts.max())
                buf = torch.zeros(2, capacity, 4)
                recv = torch.empty_like(buf)
                dist.all_to_all_single(recv, buf)
            """,
                expected_message="dist.all_to_all_single() exchanges buf, whose size differs between ranks (it is drawn "
                "from a random generator the module seeds with the rank), in equal pieces without split "
                "sizes: each rank expects pieces of its own size from the others, so where the sizes "
                'differ gloo aborts ("Received data size doesn\'t match expected size")',
                range=(8, 34, 8, 37)),
    )

    def check(self, analysis: ModuleAnalysis) -> Iterator[Report]:
        yield from _widths_joined_on_process_zero(analysis)
        yield from _models_sized_apart(analysis)
        yield from _models_changed_apart(analysis)
        for site in analysis.calls:
            gather = _gather(site)
            if gather is None or not site.reached:
                continue
            argument = call_argument(site.call, gather.input_position, gather.input_keyword)
            if argument is None or argument_value(site.call, None, "use_gather_object") is not None \
                    or _split_by_sizes(site):
                continue
            reason = _varying(analysis, site, argument.value, 0) or _length_varies(analysis, site, argument.value)
            if reason is not None and _fixed_buckets(analysis, site, gather):
                yield _report(analysis, site, argument.value, reason)
        for site in analysis.calls:
            if site.api.short_name == "all_to_all_single" and site.reached:
                yield from _splits_assumed_symmetric(analysis, site)
        yield from _preprocessed_logits_gathered(analysis)


# The Trainer's evaluation loop gathers what `preprocess_logits_for_metrics` returns (transformers
# 5.25.0, trainer.py:3064 `logits = self.preprocess_logits_for_metrics(logits, labels)`, :3065
# `logits = self.gather_function(logits)`), after padding only what it was handed.
_PREPROCESS_HOOK = "preprocess_logits_for_metrics"


def _preprocessed_logits_gathered(analysis: ModuleAnalysis) -> Iterator[Report]:
    """A module function handed to a transformers Trainer as `preprocess_logits_for_metrics` that
    returns a data-dependent number of elements (`logits[labels != -100]`): the Trainer gathers it
    from every process, each with its own count (transformers' Trainer pads the logits it hands
    the hook, not what the hook returns)."""
    for call in analysis.calls_passing(_PREPROCESS_HOOK):
        if not any(name.startswith("transformers.") and name.endswith("Trainer")
                   for name in analysis.qualified_names(call.func)):
            continue
        hook = argument_value(call, None, _PREPROCESS_HOOK)
        function = analysis.module_function(hook.value) if isinstance(hook, cst.Name) else None
        why = analysis.returned_length(function) if function is not None else None
        returned = next((node for node in every_node(function.body, cst.Return) if node.value is not None), None) \
            if why else None
        if returned is not None:
            yield Report(returned.value, f"{function.name.value}() returns '{analysis.code(returned.value)}', whose "
                         f"length differs between ranks ({why}), and the Trainer gathers what "
                         f"{_PREPROCESS_HOOK} returns from every process (transformers 5.25.0, trainer.py:3065): "
                         "where the counts differ, gloo aborts (\"Received data size doesn't match expected size\")",
                         help="Return a tensor of the shape it was handed (keep the logits of every position and "
                              "mask with the labels in compute_metrics)")


def _splits_assumed_symmetric(analysis: ModuleAnalysis, site: CallSite) -> Iterator[Report]:
    """`all_to_all_single(out, x, output_split_sizes=counts, input_split_sizes=counts)` with counts
    of the rank's own data: it expects from each rank what it sends that rank, while the others
    send what their own counts say."""
    received = argument_value(site.call, 2, "output_split_sizes")
    sent = argument_value(site.call, 3, "input_split_sizes")
    if not (isinstance(received, cst.Name) and isinstance(sent, cst.Name) and received.value == sent.value):
        return
    reason = analysis.divergence.value_at(site.call, received)
    if reason is None or reason == CONTROL:
        return
    message = (f"{analysis.code(site.call.func)}() receives output_split_sizes={received.value}, the sizes this rank "
               f"sends, which differ between ranks ({reason}): each rank gets from the others what their own sizes "
               "say, so where the counts differ gloo aborts (\"Received data size doesn't match expected size\")")
    yield Report(received, message, None, "Exchange the sizes first (all_to_all_single of the counts), and receive "
                 "with what the others send")


def _split_by_sizes(site: CallSite) -> bool:
    """`all_to_all_single(out, x, output_split_sizes=..., input_split_sizes=...)`: uneven by design."""
    return site.api.short_name == "all_to_all_single" and any(
        argument_value(site.call, position, name) is not None
        for position, name in ((2, "output_split_sizes"), (3, "input_split_sizes")))


def _gather(site: CallSite) -> Optional[_Gather]:
    module, _, name = site.api.qualified_name.rpartition(".")
    if module in apis.TORCH_MODULES:
        return _TORCH_GATHERS.get(name) or _TORCH_REDUCTIONS.get(name)
    return _ACCELERATE_GATHERS.get(site.api.qualified_name) or _ACCELERATE_REDUCTIONS.get(site.api.qualified_name) \
        or _LIGHTNING_GATHERS.get(site.api.qualified_name)


def _is_reduction(site: CallSite) -> bool:
    module, _, name = site.api.qualified_name.rpartition(".")
    return name in _TORCH_REDUCTIONS if module in apis.TORCH_MODULES else site.api.qualified_name in _ACCELERATE_REDUCTIONS


# -- what varies in size ----------------------------------------------------------------------
def _varying(analysis: ModuleAnalysis, site: CallSite, expr: cst.BaseExpression, depth: int) -> Optional[str]:
    """Why `expr` has a number of elements that depends on each rank's data or rank; None when
    it plainly does not, or cannot be told."""
    if isinstance(expr, cst.Name):
        return _varying_name(analysis, site, expr, depth)
    if isinstance(expr, cst.Subscript):
        return _varying_subscript(analysis, site, expr, depth)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _ELEMENTWISE):
        return _varying(analysis, site, expr.left, depth) or _varying(analysis, site, expr.right, depth)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return _varying(analysis, site, expr.expression, depth)
    if isinstance(expr, cst.Call):
        return _varying_call(analysis, site, expr, depth)
    return None


def _length_varies(analysis: ModuleAnalysis, site: CallSite, expr: cst.BaseExpression) -> Optional[str]:
    """Why how many items `expr` holds differs between ranks, from the divergence analysis (a
    slice bounded by a rank's own count, `ids[:, :max_len]`; a rank's piece of a split)."""
    reason = analysis.divergence.length_at(site.call, expr)
    # A value merely set under a condition that differs between ranks (in a loop over a rank's
    # own share) has the shape it is computed with.
    return None if reason == CONTROL else reason


def _varying_name(analysis: ModuleAnalysis, site: CallSite, name: cst.Name, depth: int) -> Optional[str]:
    if depth >= _MAX_DEPTH:
        return None
    items = _items_looped(analysis, site, name)
    if items is not None:  # `for seq in generations:` with `generations = [lm.generate(p) for p in mine]`
        return _varying(analysis, site, items, depth + 1)
    reasons = set()
    for world in site.reached:
        values = analysis.values_in_world(site, name, world)
        if not values or any(value is name for value in values):
            return None  # a parameter, a global, a loop variable: unknown
        reasons.update(_varying(analysis, site, value, depth + 1) for value in values)
    return None if None in reasons or not reasons else sorted(reasons)[0]


def _items_looped(analysis: ModuleAnalysis, site: CallSite, name: cst.Name) -> Optional[cst.BaseExpression]:
    """The item expression of the list comprehension a `for name in <list>:` around the gather
    iterates over, when the list is a local name bound once to one."""
    loop = next((node for node in reversed(analysis.ancestors(site)) if isinstance(node, cst.For)
                 and isinstance(node.target, cst.Name) and node.target.value == name.value), None)
    if loop is None or not isinstance(loop.iter, cst.Name):
        return None
    made = [value for world in site.reached for value in (analysis.values_in_world(site, loop.iter, world) or [None])]
    if not made or not all(isinstance(value, cst.ListComp) for value in made) or len({id(v) for v in made}) != 1:
        return None
    return made[0].elt


def _varying_subscript(analysis: ModuleAnalysis, site: CallSite, subscript: cst.Subscript,
                       depth: int) -> Optional[str]:
    for element in subscript.slice:
        index = element.slice
        if isinstance(index, cst.Index) and _is_mask(analysis, site, index.value, depth):
            return "a boolean mask keeps a data-dependent number of elements"
        if isinstance(index, cst.Slice) and _rank_strided(analysis, index):
            return (f"{analysis.code(subscript)} has a different length on each rank unless the length "
                    "divides evenly by the stride")
    if all(isinstance(element.slice, cst.Slice) for element in subscript.slice):
        return _varying(analysis, site, subscript.value, depth)  # `sel[:]`, `sel[:, :4]`
    return None


def _rank_strided(analysis: ModuleAnalysis, index: cst.Slice) -> bool:
    """`rank::world_size`: starts at the rank, steps by more than one."""
    if index.lower is None or index.step is None or integer_literal(index.step) == 1:
        return False
    return analysis.conditions.quantity(index.lower) is not None


def _is_mask(analysis: ModuleAnalysis, site: CallSite, expr: cst.BaseExpression, depth: int) -> bool:
    """A boolean tensor: a comparison, a combination of masks, or a name holding one."""
    if isinstance(expr, cst.Comparison):
        return all(isinstance(target.operator, _MASK_COMPARISONS) for target in expr.comparisons)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
        return _is_mask(analysis, site, expr.expression, depth)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
        return _is_mask(analysis, site, expr.left, depth) or _is_mask(analysis, site, expr.right, depth)
    if isinstance(expr, cst.Call):
        if _torch_function(analysis, expr) in _MASK_METHODS:
            return True
        return method_name(expr) in _MASK_METHODS and not _torch_function(analysis, expr)
    if isinstance(expr, cst.Name) and depth < _MAX_DEPTH:
        for world in site.reached:
            values = analysis.values_in_world(site, expr, world)
            if not values or not all(value is not expr and _is_mask(analysis, site, value, depth + 1)
                                     for value in values):
                return False
        return bool(site.reached)
    return False


def _varying_call(analysis: ModuleAnalysis, site: CallSite, call: cst.Call, depth: int) -> Optional[str]:
    if generates_uneven_lengths(call):
        return ".generate() stops where each rank's sequences end, so the length of what it returns depends on " \
               "the rank's prompts"
    if analysis.calls_project_function(call):
        # `confident(scores)`: a helper of the project whose result holds as many items as a
        # filter of what it is handed lets through (its summary), where that differs.
        reason = analysis.divergence.length_at(site.call, call)
        return f"{analysis.code(call.func)}() returns as many elements as it keeps of what it is handed, " \
               f"which differs between ranks ({reason})" if reason and reason != CONTROL else None
    function = _torch_function(analysis, call)
    if function in _DATA_SIZED:
        return f"torch.{function}() returns a data-dependent number of elements"
    if function is not None or not isinstance(call.func, cst.Attribute):
        return None
    method = call.func.attr.value
    if method in _DATA_SIZED:
        return f".{method}() returns a data-dependent number of elements"
    if method in _SIZE_KEEPING or method in ("argmax", "argmin") and _keeps_size(call):
        return _varying(analysis, site, call.func.value, depth)
    return None


def _keeps_size(call: cst.Call) -> bool:
    """`x.argmax(-1)` of a (n, k) tensor still has n elements; `x.argmax()` has one."""
    return bool(call.args)


def _torch_function(analysis: ModuleAnalysis, call: cst.Call) -> Optional[str]:
    """`nonzero` for `torch.nonzero(...)`, however torch is imported; None for anything else."""
    for qualified in analysis.qualified_names(call):
        module, _, name = qualified.rpartition(".")
        if module == "torch":
            return name
    return None


# -- the buckets ------------------------------------------------------------------------------
def _fixed_buckets(analysis: ModuleAnalysis, site: CallSite, gather: _Gather) -> bool:
    """Whether every rank's buckets have one shape: always for the collectives that allocate
    them, and for `[make() for _ in ...]`, `[make()] * n` and `[a, a]` lists."""
    if gather.buckets_keyword is None:
        return True
    argument = call_argument(site.call, 0, gather.buckets_keyword)
    if argument is None:
        return False
    for world in site.reached:
        values = analysis.values_in_world(site, argument.value, world)
        if not values or not all(_alike(analysis, value) for value in values):
            return False
    return True


def _alike(analysis: ModuleAnalysis, value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.ListComp):
        bound = set(_names(value.for_in.target))
        return value.for_in.inner_for_in is None and not bound & set(_names(value.elt))
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        return isinstance(value.left, cst.List) and len(value.left.elements) == 1
    if isinstance(value, cst.List):
        return len({analysis.code(element.value) for element in value.elements}) == 1
    return False


def _names(node: cst.CSTNode) -> Iterator[str]:
    if isinstance(node, cst.Name):
        yield node.value
    for child in children(node):
        if not (isinstance(node, cst.Attribute) and child is node.attr):
            yield from _names(child)


def _report(analysis: ModuleAnalysis, site: CallSite, expr: cst.BaseExpression, reason: str) -> Report:
    called = f"{analysis.code(site.call.func)}()"
    shown = " ".join(analysis.code(expr).split())
    if len(shown) > 40:
        shown = shown[:37] + "..."
    if site.api.short_name == "all_to_all_single":  # measured with gloo on 2 processes (blind44)
        message = (f"{called} exchanges {shown}, whose size differs between ranks ({reason}), in equal pieces "
                   "without split sizes: each rank expects pieces of its own size from the others, so where the "
                   "sizes differ gloo aborts (\"Received data size doesn't match expected size\")")
        return Report(expr, message, None, "Agree on one size first (all_reduce the capacity with MAX and pad), "
                      "or exchange the counts and pass output_split_sizes and input_split_sizes")
    if _is_reduction(site):  # measured with gloo on 2 processes, 3 elements against 2
        message = (f"{called} reduces {shown}, whose length differs between ranks ({reason}): where the lengths "
                   "differ, the rank with fewer elements goes on with a partly reduced tensor and the other waits "
                   "until the timeout")
        return Report(expr, message, None, "Give it one length on every rank first (torch.bincount(..., "
                      "minlength=n), or pad to a length every rank agrees on)")
    own_buckets = {"all_gather": "buckets of one shape", "all_gather_into_tensor": "an output tensor of fixed size"}
    torch_gather = site.api.qualified_name.rpartition(".")[0] in apis.TORCH_MODULES
    buckets = own_buckets.get(site.api.short_name, "") if torch_gather else ""
    buckets = buckets or "buckets shaped like the local tensor"
    message = (f"{called} gathers {shown}, whose length differs between ranks ({reason}), into {buckets}: "
               "where the counts differ, gloo aborts (\"Received data size doesn't match expected size\")")
    help_text = ("Pad it to one length first (accelerator.pad_across_processes, or gather the lengths and "
                 "pad), or gather Python objects (all_gather_object)")
    return Report(expr, message, None, help_text)


_ACCELERATE = frameworks.load().versions["accelerate"]
_TORCH = frameworks.load().versions["torch"]
# `dispatch_batches=False` (TrainingArguments' accelerator_config, DataLoaderConfiguration, Accelerator)
# has each process draw its own batches; `split_batches=True` has process 0 split one batch.
_OWN_BATCHES = re.compile(r"""dispatch_batches["']?\s*[:=]\s*False|split_batches["']?\s*[:=]\s*True""")


def _widths_joined_on_process_zero(analysis: ModuleAnalysis) -> Iterator[Report]:
    """A collator that pads each batch to its own longest row (`width = max(len(r["ids"]) for r in
    rows)`, `pad_sequence(...)`), handed with an IterableDataset of the module's own to a Trainer, or
    to a DataLoader that accelerate prepares: accelerate then dispatches, process 0 draws one batch per
    process and concatenates them (data_loader.py:842), which raises there when their widths differ,
    while the other processes wait for their slice in its broadcast (transformers#26548)."""
    if analysis.per_file(lambda text: "IterableDataset" not in text or bool(_OWN_BATCHES.search(text))):
        return
    streams = {klass.name.value for klass in every_node(analysis.module, cst.ClassDef)
               if analysis.derives_from(klass, ("torch", "datasets"), ("IterableDataset",))}
    functions = {f.name.value: f for f in analysis.module.body if isinstance(f, cst.FunctionDef)}
    for call in every_node(analysis.module, cst.Call):
        name = last_name(call.func) or ""
        if name.endswith("Trainer"):
            dataset, collator = argument_value(call, None, "train_dataset"), argument_value(call, None, "data_collator")
        elif name == "DataLoader" and analysis.per_file(lambda text: "prepare(" in text):
            dataset, collator = argument_value(call, 0, "dataset"), argument_value(call, None, "collate_fn")
        else:
            continue
        made = dataset.func if isinstance(dataset, cst.Call) else None
        collate = functions.get(collator.value) if isinstance(collator, cst.Name) else None
        if not (isinstance(made, cst.Name) and made.value in streams) or collate is None:
            continue
        width = next((node for node in every_node(collate, cst.Call) if _own_longest(node)), None)
        if width is not None:
            yield Report(width, f"'{collate.name.value}' pads each batch to its own longest row "
                         f"('{analysis.code(width)}'), and accelerate dispatches the batches of the IterableDataset "
                         f"'{made.value}': process 0 draws one batch per process and concatenates them (accelerate "
                         f"{_ACCELERATE}, data_loader.py:842), which raises there where their widths differ, while "
                         f"the other processes wait for their slice in its broadcast",
                         help="Pad to one fixed length, or have each process draw its own batches: "
                              "accelerator_config={'dispatch_batches': False}")


def _own_longest(call: cst.Call) -> bool:
    """`max(len(r["input_ids"]) for r in rows)`, `pad_sequence(ids, batch_first=True)`."""
    name = last_name(call.func) or ""
    if name == "pad_sequence":
        return True
    if name != "max" or len(call.args) != 1 or not isinstance(call.args[0].value, (cst.GeneratorExp, cst.ListComp)):
        return False
    item = call.args[0].value.elt
    return isinstance(item, cst.Call) and isinstance(item.func, cst.Name) and item.func.value == "len"


# Calls that wrap a module in DistributedDataParallel (or shard it), whose constructor first checks
# every rank's parameter shapes against the others' (torch nn/parallel/distributed.py
# `_verify_param_shape_across_processes`, an all_gather of them) and then broadcasts rank 0's values.
_WRAPPING = frozenset({"accelerate.accelerator.Accelerator.prepare", "accelerate.accelerator.Accelerator.prepare_model",
                       "lightning.fabric.fabric.Fabric.setup", "lightning.fabric.fabric.Fabric.setup_module",
                       "torch.nn.parallel.DistributedDataParallel",
                       "torch.nn.parallel.distributed.DistributedDataParallel"})


def _models_sized_apart(analysis: ModuleAnalysis) -> Iterator[Report]:
    """A module made with a size that differs between ranks (`TinyLM(len(vocab))`, the vocabulary of
    the rank's own lines), then wrapped in DDP (accelerate's prepare, Fabric's setup, `DDP(model)`):
    its constructor gathers every rank's parameter shapes and raises where they differ."""
    for site in analysis.calls:
        if site.api.qualified_name not in _WRAPPING or not isinstance(site.call, cst.Call):
            continue
        for arg in site.call.args:
            for made in analysis.reaching_values(site, arg.value):
                if not (isinstance(made, cst.Call) and (last_name(made.func) or "")[:1].isupper()):
                    continue  # a module's class, made with sizes: `TinyLM(len(vocab))`, `nn.Embedding(n, 8)`
                sized = next(((size.value, why) for size in made.args
                              if (why := _size_varies(analysis, site, size.value)) is not None), None)
                if sized is not None:
                    yield Report(made, f"'{analysis.code(made)}' is made with '{analysis.code(sized[0])}', which "
                                 f"differs between ranks ({sized[1]}), and {analysis.code(site.call.func)}() wraps it "
                                 f"in DistributedDataParallel, whose constructor gathers every rank's parameter "
                                 f"shapes and raises where they differ (torch {_TORCH}, nn/parallel/distributed.py "
                                 f"_verify_param_shape_across_processes)",
                                 help="Make the module from sizes alike on every rank: build the vocabulary on one "
                                      "rank and broadcast it, or from all the data")
                    break


def _models_changed_apart(analysis: ModuleAnalysis) -> Iterator[Report]:
    """A module whose parameters one rank changes before DDP wraps it, under a test that data
    differing between ranks decides: parameters frozen (`p.requires_grad_(False)`, which DDP then
    leaves out), a submodule replaced (`model.pos = nn.Embedding(n, 8)`), embeddings resized. DDP's
    constructor gathers every rank's parameter shapes and raises where they differ (apex#149)."""
    for site in analysis.calls:
        if site.api.qualified_name not in _WRAPPING or not isinstance(site.call, cst.Call):
            continue
        line = analysis.position(site.call).start.line
        for model in {arg.value.value for arg in site.call.args if isinstance(arg.value, cst.Name)}:
            for change in _changes_of(site.scope, model):
                early = analysis.position(change).start.line < line
                reason = _decided_by_data(analysis, change) if early else None
                if reason is not None:
                    yield Report(change, f"'{analysis.code(change)}' changes the parameters of '{model}' only on ranks "
                                 f"where {reason}, and {analysis.code(site.call.func)}() (line {line}) wraps it in "
                                 f"DistributedDataParallel, whose constructor gathers every rank's parameter shapes "
                                 f"and raises where they differ (torch {_TORCH}, nn/parallel/distributed.py "
                                 f"_verify_param_shape_across_processes)",
                                 help="Decide the change from values alike on every rank (agree on it with a "
                                      "collective first), or make it on every rank")
                    break


# Calls that change which parameters a module holds, or their shapes.
_RESHAPING = frozenset({"requires_grad_", "resize_token_embeddings"})


def _changes_of(scope: cst.CSTNode, model: str) -> Iterator[cst.CSTNode]:
    """The calls and assignments in `scope` that change `model`'s parameters: a `requires_grad`
    switch on it or on a loop's parameters of it, a submodule assigned anew, a resize of its
    embeddings. (The module's other functions are not read: the cut keeps only their signatures
    where they run no collective.)"""
    rooted = {model} | {name for loop in every_node(scope, cst.For) if _rooted_at(loop.iter, {model})
                        for name in _names(loop.target)}
    modules = {name for assign in every_node(scope, cst.Assign) if _makes_module(assign.value)
               for target in assign.targets for name in _names(target.target)}
    for call in every_node(scope, cst.Call):
        if last_name(call.func) in _RESHAPING and isinstance(call.func, cst.Attribute) \
                and _rooted_at(call.func.value, rooted):
            yield call
    for assign in every_node(scope, cst.Assign):
        for target in assign.targets:
            if isinstance(target.target, cst.Attribute) and _rooted_at(target.target.value, rooted) \
                    and (target.target.attr.value == "requires_grad" or _makes_module(assign.value)
                         or isinstance(assign.value, cst.Name) and assign.value.value in modules):
                yield assign


def _makes_module(value: cst.BaseExpression) -> bool:
    """`nn.Embedding(n, 8)`, `Head(...)`: a class made in place, a module to assign."""
    return isinstance(value, cst.Call) and (last_name(value.func) or "")[:1].isupper()


def _rooted_at(expr: cst.BaseExpression, names: set) -> bool:
    """`model[0].parameters()`, `model.backbone`: an expression read off one of `names`."""
    while isinstance(expr, (cst.Attribute, cst.Subscript, cst.Call)):
        expr = expr.func if isinstance(expr, cst.Call) else expr.value
    return isinstance(expr, cst.Name) and expr.value in names


def _decided_by_data(analysis: ModuleAnalysis, node: cst.CSTNode) -> Optional[str]:
    """Why the `if` around `node` can go one way on some ranks and the other elsewhere, or the
    `try` whose handler holds it can fail on some ranks only, where data each rank holds decides
    it; None elsewhere."""
    divergence = analysis.divergence
    path = path_to(analysis.module, node) or ()
    for index, statement in reversed(list(enumerate(path))):
        if isinstance(statement, cst.If):
            reason = next((why for leaf in boolean_leaves(statement.test)
                           if is_data_reason(why := divergence.tests.get(leaf))), None)
            if reason is not None:
                return f"'{analysis.code(statement.test)}' holds ({reason})"
        handled = index + 1 < len(path) and isinstance(path[index + 1], cst.ExceptHandler)
        if isinstance(statement, cst.Try) and handled and statement in divergence.raising:
            line = analysis.position(statement).start.line
            return f"the 'try' at line {line} fails ({divergence.raising[statement]})"
    return None


def _size_varies(analysis: ModuleAnalysis, site: CallSite, size: cst.BaseExpression) -> Optional[str]:
    """Why a count differs between ranks through their data: `len(vocab)` (or a name holding one)
    of what is made from the rank's own items. Only counts: a feature width read off a batch
    (`x.shape[1]`) is the same on every rank."""
    counted = [size] if isinstance(size, cst.Call) else list(analysis.reaching_values(site, size))
    for value in counted:
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "len" and value.args:
            for why in (analysis.divergence.value_at(site.call, value),
                        analysis.divergence.value_at(site.call, value.args[0].value)):
                if is_data_reason(why) or why == OWN_SHARE:
                    return why
    return None
