# verify: ok
"""Hand-fixed twin of ddp_join_logging_allreduce.py.

Inside `join()` only DDP's own collectives run; each rank sums its losses locally and the sum and
count are all-reduced once the `join()` block has closed, on every rank.
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
        totals = torch.zeros(2)
        with model.join():
            for x, y in loader:
                loss = F.mse_loss(model(x), y)
                loss.backward()
                opt.step()
                opt.zero_grad()
                totals += torch.tensor([loss.item(), 1.0])
        dist.all_reduce(totals)
        if rank == 0:
            print(f"epoch {epoch}: mean loss {totals[0].item() / totals[1].item():.4f}")

    checksum = torch.cat([p.detach().flatten() for p in model.parameters()]).sum()
    print(f"rank {rank}: done, checksum {checksum.item():.5f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
