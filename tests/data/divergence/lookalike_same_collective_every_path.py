# verify: ok
"""Correct: whether a process finds its cached statistics on disk differs by rank (only rank 0's
cache exists), but both arms end in local work, and the all_reduce after the `if` runs on every
path."""
import os
import tempfile

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    cache = os.path.join(tempfile.mkdtemp(), "stats.pt")
    if rank == 0:
        torch.save(torch.tensor([4.0, 2.0]), cache)
    if os.path.exists(cache):
        stats = torch.load(cache)
    else:
        data = torch.arange(6, dtype=torch.float32)
        stats = torch.tensor([data.mean().item(), data.std().item()])
    dist.all_reduce(stats)
    print(f"rank {rank}: summed stats {stats.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
