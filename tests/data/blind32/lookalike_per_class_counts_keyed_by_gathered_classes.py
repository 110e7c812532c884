# verify: ok
"""Look-alike: per-class counts keyed by the classes seen, taken over every process.

Each process's `labels.unique()` is exchanged with `all_gather_object` and the keys are the union,
so every process packs the same keys in the same order into the one all-reduce (after
https://github.com/vllm-project/speculators/pull/813); the class missing from process 1's shard
counts zero there.
"""
import os

import torch
import torch.distributed as dist

LABELS = torch.tensor([2, 0, 1, 0, 2, 1, 0, 1, 2, 0, 1, 1])
NOISE = torch.tensor([0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1])


def classes_seen_anywhere(labels):
    seen = [None] * dist.get_world_size()
    dist.all_gather_object(seen, labels.unique().tolist())
    return sorted(set().union(*seen))


def per_class_counts(preds, labels):
    counts = {}
    for c in classes_seen_anywhere(labels):
        rows = labels == c
        counts[f"support/{c}"] = rows.sum().item()
        counts[f"correct/{c}"] = (preds[rows] == c).sum().item()
    return counts


def reduce_counts(counts):
    keys = sorted(counts)
    packed = torch.tensor([float(counts[k]) for k in keys])
    dist.all_reduce(packed)
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
