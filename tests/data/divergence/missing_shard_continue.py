# verify: error
"""Each process reads its own feature shards from disk and all-reduces the running statistics after
each one. A shard that is missing is skipped with `except FileNotFoundError: continue`, which also
skips that round's all_reduce; rank 1's third shard was never written.

Modelled on pmodels/mpich#6585 (https://github.com/pmodels/mpich/issues/6585): a read error on
one process made it leave the collective read loop early, and the others deadlocked in the next
round's alltoall.
"""
import os
import tempfile

import torch
import torch.distributed as dist

NUM_SHARDS = 3


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    shard_dir = tempfile.mkdtemp()
    for index in range(NUM_SHARDS):
        if (rank, index) != (1, 2):  # the preprocessing job lost this one
            torch.save(torch.full((4,), float(index + rank)), os.path.join(shard_dir, f"shard{index}.pt"))
    stats = torch.zeros(2)
    for index in range(NUM_SHARDS):
        try:
            features = torch.load(os.path.join(shard_dir, f"shard{index}.pt"))
        except FileNotFoundError:
            continue
        round_stats = torch.tensor([features.sum().item(), float(features.numel())])
        dist.all_reduce(round_stats)  # expect: BCL005
        stats += round_stats
    print(f"rank {rank}: global mean {(stats[0] / stats[1]).item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
