# verify: ok
"""Look-alike: each process splits its step into a different number of micro-batches.

Each process cuts its own shard into token-budgeted micro-batches (process 0 gets three, process
1 two), which resembles the uneven micro-batch counts that hang dynamic batching. Here every
micro-batch but the last runs under `ddp.no_sync()`, so each process runs exactly one
synchronising backward per optimizer step, and the number of steps is a constant: correct.
"""
import contextlib

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

MAX_TOKENS = 8
STEPS = 3
SHARD_LENGTHS = [[3, 4, 5, 2], [7, 8]]  # sequence lengths per process shard


def token_budget_split(lengths, max_tokens):
    groups, cur = [], []
    for n in lengths:
        if cur and sum(cur) + n > max_tokens:
            groups.append(cur)
            cur = []
        cur.append(n)
    return groups + [cur]


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(1, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    lengths = SHARD_LENGTHS[dist.get_rank() % 2]
    for step in range(STEPS):
        micro = token_budget_split(lengths, MAX_TOKENS)
        for i, group in enumerate(micro):
            last = i == len(micro) - 1
            ctx = contextlib.nullcontext() if last else model.no_sync()
            with ctx:
                x = torch.tensor([[n / 10.0] for n in group])
                loss = model(x).pow(2).sum() / sum(lengths)
                loss.backward()
        opt.step()
        opt.zero_grad()
    w = model.module.weight.detach().clone()
    dist.all_reduce(w)
    print("weight (summed over processes):", w.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
