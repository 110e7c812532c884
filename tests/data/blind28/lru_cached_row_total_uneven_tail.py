# verify: error,hang
"""Sum-reduced loss divided by the step's global row count, memoised per local batch size.

Modelled on https://github.com/NVIDIA/TensorRT-LLM/pull/16054: a rank-local cache lets a hit on
one rank skip the all-reduce that a miss on another rank is about to enter.

Each process reads its own part file (process 0: 12 rows, process 1: 10 rows) in batches of 4.
`global_rows(n)` all-reduces the local row count so that a summed loss can be divided by the rows
of the whole step, and it is wrapped in `functools.lru_cache` because batch sizes repeat.  Both
processes miss on 4 at the first batch and hit at the second; at the third, process 0 hits again
(4 rows) while process 1 misses on its short tail batch (2 rows) and all-reduces alone, against
process 0's DDP gradient all-reduce.
"""
import functools

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

BATCH = 4


@functools.lru_cache(maxsize=None)
def global_rows(n_local):
    total = torch.tensor([n_local], dtype=torch.int64)
    dist.all_reduce(total)  # expect: BCL005
    return int(total.item())


def read_part(rank):
    rows = 12 if rank == 0 else 10
    g = torch.Generator().manual_seed(100 + rank)
    x = torch.randn(rows, 4, generator=g)
    return x, x.sum(dim=1, keepdim=True)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = read_part(rank)
    for epoch in range(2):
        for start in range(0, len(x), BATCH):
            xb, yb = x[start:start + BATCH], y[start:start + BATCH]
            loss = ((model(xb) - yb) ** 2).sum() / global_rows(len(xb))
            opt.zero_grad()
            loss.backward()
            opt.step()
    dist.barrier()
    print(f"rank {rank}: done, weight sum {model.module.weight.sum().item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
