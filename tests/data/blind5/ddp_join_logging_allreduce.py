# verify: error
"""A loss all_reduce for the progress log inside DDP's `join()` context, with uneven shards.

Modelled on https://github.com/pytorch/pytorch/pull/57448 and
https://github.com/pytorch/pytorch/pull/56755: `DistributedDataParallel.join()` lets a rank that
ran out of batches shadow DDP's own collectives (the forward's join all-reduce, the gradient
buckets) for the ranks still training, but "this context manager is not aware of non-DDP
collective communication".

13 samples split in contiguous shards of ceil(13 / 2) give rank 0 four batches of 2 and rank 1
three. The loop is wrapped in `model.join()`, the documented fix for uneven inputs, but each step
also all-reduces the loss for the log line: on rank 0's fourth step rank 1, already joined, only
runs join()'s shadow collectives, and the log all_reduce meets one of those.
"""
import math

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset

N_SAMPLES = 13
BATCH = 2


def shard_loader(rank, world):
    g = torch.Generator().manual_seed(7)
    x, y = torch.randn(N_SAMPLES, 6, generator=g), torch.randn(N_SAMPLES, 1, generator=g)
    per_rank = math.ceil(N_SAMPLES / world)
    lo, hi = rank * per_rank, min(N_SAMPLES, (rank + 1) * per_rank)
    return DataLoader(TensorDataset(x[lo:hi], y[lo:hi]), batch_size=BATCH)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loader = shard_loader(rank, world)

    for epoch in range(2):
        with model.join():
            for step, (x, y) in enumerate(loader):
                loss = F.mse_loss(model(x), y)
                loss.backward()
                opt.step()
                opt.zero_grad()
                logged = loss.detach().reshape(1)
                dist.all_reduce(logged)  # expect: BCL005
                if rank == 0:
                    print(f"epoch {epoch} step {step}: mean loss {logged.item() / world:.4f}")

    checksum = torch.cat([p.detach().flatten() for p in model.parameters()]).sum()
    print(f"rank {rank}: done, checksum {checksum.item():.5f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
