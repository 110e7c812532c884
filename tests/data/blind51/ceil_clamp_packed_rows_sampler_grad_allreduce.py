# verify: hang,error
"""A contiguous sampler that gives the last process fewer packed rows (ceil, then clamp).

Modelled on https://github.com/mlcommons/storage/issues/455 (`dlio_sampler` uses
`ceil(N/size)` and clamps the last rank's end, so with N not divisible by the world size the
last rank gets fewer samples, one batch fewer with `drop_last`, and the per-batch collectives
deadlock). Here the samples are documents packed offline into fixed-length rows (11 rows of 8
tokens); the sampler gives process 0 rows 0-5 and process 1 rows 6-10, batches of two rows drop
the last partial batch, and each batch's gradients are averaged by hand with an all-reduce.
"""
import math

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Sampler

SEQ, N_ROWS = 8, 11
PACKED = torch.arange(N_ROWS * SEQ, dtype=torch.float32).remainder(7).view(N_ROWS, SEQ) / 7


class ContiguousSampler(Sampler):
    def __init__(self, num_samples, rank, size):
        per_proc = math.ceil(num_samples / size)
        start = rank * per_proc
        end = min(start + per_proc, num_samples)
        self.indices = list(range(start, end))

    def __iter__(self):
        return iter(self.indices)

    def __len__(self):
        return len(self.indices)


def average_gradients(model):
    for p in model.parameters():
        dist.all_reduce(p.grad)  # expect: BCL005
        p.grad /= dist.get_world_size()


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = torch.nn.Linear(SEQ, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    sampler = ContiguousSampler(N_ROWS, dist.get_rank(), dist.get_world_size())
    loader = DataLoader(PACKED, batch_size=2, sampler=sampler, drop_last=True)
    for epoch in range(2):
        for rows in loader:
            loss = model(rows).pow(2).mean()
            loss.backward()
            average_gradients(model)
            opt.step()
            opt.zero_grad()
    print("weight sum:", model.weight.sum().item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
