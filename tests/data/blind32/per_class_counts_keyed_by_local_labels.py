# verify: error,hang
"""Per-class validation counts keyed by the classes this process saw, packed into one all-reduce.

Modelled on https://github.com/vllm-project/speculators/pull/813: validation metrics are kept in
a dict and reduced once per epoch by stacking the values in sorted key order into one
`dist.all_reduce`, which is right only while every rank holds the same keys. Here the keys come
from `labels.unique()` of this process's shard: the rare class 2 sits only at even positions, so
process 0 packs 6 values and process 1 packs 4 into the same all-reduce.
"""
import os

import torch
import torch.distributed as dist

LABELS = torch.tensor([2, 0, 1, 0, 2, 1, 0, 1, 2, 0, 1, 1])
NOISE = torch.tensor([0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1])


def per_class_counts(preds, labels):
    counts = {}
    for c in labels.unique().tolist():
        rows = labels == c
        counts[f"support/{c}"] = rows.sum().item()
        counts[f"correct/{c}"] = (preds[rows] == c).sum().item()
    return counts


def reduce_counts(counts):
    keys = sorted(counts)
    packed = torch.tensor([float(counts[k]) for k in keys])
    dist.all_reduce(packed)  # expect: BCL015
    return dict(zip(keys, packed.tolist()))


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    labels = LABELS[rank::world]
    preds = (labels + NOISE[rank::world]) % 3  # stands in for the model's argmax
    totals = reduce_counts(per_class_counts(preds, labels))
    recall = {k.split("/")[1]: totals[k] / totals[f"support/{k.split('/')[1]}"] for k in totals if k.startswith("correct/")}
    if rank == 0:
        print("per-class recall", recall)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
