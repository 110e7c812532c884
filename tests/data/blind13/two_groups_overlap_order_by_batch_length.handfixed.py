# verify: ok
"""Hand-fixed: whether to sync the statistics first is decided from the step's longest batch over all
processes (one all-reduce MAX on the gradient group, the same for everyone), so every process issues
the two groups' all-reduces in the same order.
"""
import os

import torch
import torch.distributed as dist

from mod_groups import make_groups, sync_grads, sync_stats

LONG = 6
# sequence lengths of each step's batch, dealt out by process
LENGTHS = [[4, 4], [3, 8], [5, 2]]


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    groups = make_groups()
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    stats = torch.zeros(2)
    for step, lengths in enumerate(LENGTHS):
        length = lengths[rank]
        x = torch.ones(length, 3) * (step + 1)
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        local = torch.tensor([float(length), 1.0])
        longest = torch.tensor([float(length)])
        dist.all_reduce(longest, op=dist.ReduceOp.MAX, group=groups["grads"])
        if longest.item() >= LONG:
            stats += sync_stats(local, groups)
            sync_grads(model, groups)
        else:
            sync_grads(model, groups)
            stats += sync_stats(local, groups)
        optimizer.step()
    if rank == 0:
        print(f"tokens {stats[0].item():.0f} over {stats[1].item():.0f} batches")
    dist.destroy_process_group()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
