# verify: ok
"""Look-alike: the steps per epoch are printed on rank 0 only, but the count comes from
`len(data)` and the batch size, arithmetic on a dataset every rank holds in full; the sampler's
all-reducing `__len__` (mod_sampler.py) is reached only through the loop, on every rank.
"""
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset

from mod_sampler import AgreedBatchSampler

N_ITEMS = 11
BATCH = 2


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(N_ITEMS, 4), torch.randint(0, 3, (N_ITEMS,)))
    loader = DataLoader(data, batch_sampler=AgreedBatchSampler(N_ITEMS, BATCH, rank, world))
    model = torch.nn.Linear(4, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    if rank == 0:
        print(f"{-(-len(data) // (BATCH * world))} steps per epoch at most", flush=True)
    for epoch in range(2):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
            opt.step()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
