# verify: error
"""Rank 0 picks the prompts every process scores this step and broadcasts them; the receivers
allocate their buffer with `torch.zeros_like(local_batch)`, shaped by their own loader's batch.
Five prompts over two processes: rank 0's batch has three rows, rank 1's two, and gloo aborts on
the size mismatch.

Modelled on mlcommons/algorithmic-efficiency#146
(https://github.com/mlcommons/algorithmic-efficiency/pull/146): the variable initialised to receive
a broadcast tensor had the wrong shape, which deadlocked DDP training until it was fixed.
"""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Subset

PROMPTS = torch.arange(20).reshape(5, 4)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    loader = DataLoader(Subset(PROMPTS, range(rank, len(PROMPTS), world)), batch_size=3)
    local_batch = next(iter(loader))
    shared = local_batch.clone() if rank == 0 else torch.zeros_like(local_batch)
    dist.broadcast(shared, src=0)  # expect: BCL007
    print(f"rank {rank}: scoring {shared.shape[0]} prompts, checksum {shared.sum().item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
