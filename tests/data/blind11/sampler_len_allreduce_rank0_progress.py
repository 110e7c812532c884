# verify: error
"""`len(loader)` on rank 0 only, where the batch sampler's `__len__` all-reduces.

Shape of huggingface/sentence-transformers#3348
(https://github.com/huggingface/sentence-transformers/issues/3348), a batch sampler whose
`__len__` must match what every DDP/accelerate process iterates, and meta-pytorch/torchrec#4158
(https://github.com/meta-pytorch/torchrec/pull/4158), ranks agreeing on their batch count with an
all-reduce (MIN). `AgreedBatchSampler.__len__` (mod_sampler.py) all-reduces; `DataLoader.__len__`
asks the batch sampler, and only rank 0 asks, to print the steps per epoch.
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
        print(f"{len(loader)} steps per epoch", flush=True)  # expect: BCL005
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
