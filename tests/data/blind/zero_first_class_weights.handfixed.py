# verify: ok
"""Only the dataset is built under `torch_distributed_zero_first`; the class weights, an
all_reduce, are computed after the block on every process."""
import os

import torch
import torch.distributed as dist

from mod_distctx import torch_distributed_zero_first

NUM_CLASSES = 3


def class_weights(labels):
    counts = torch.bincount(labels, minlength=NUM_CLASSES).float()
    dist.all_reduce(counts)
    return counts.sum() / (NUM_CLASSES * counts.clamp(min=1))


def build_dataset(rank):
    g = torch.Generator().manual_seed(rank)
    labels = torch.randint(0, NUM_CLASSES, (20,), generator=g)
    feats = torch.randn(20, 4, generator=g)
    return feats, labels


def main():
    dist.init_process_group("gloo")
    local_rank = int(os.environ.get("LOCAL_RANK", -1))
    with torch_distributed_zero_first(local_rank):
        feats, labels = build_dataset(dist.get_rank())
    weights = class_weights(labels)
    print(f"rank {dist.get_rank()}: class weights {weights.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
