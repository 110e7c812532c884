# verify: hang
"""Collectives on two process groups issued in an order that depends on the process's own batch.

Modelled on meta-pytorch/torchrec#4149 (https://github.com/meta-pytorch/torchrec/pull/4149):
"Different collective execution order across ranks", a deadlock from "rank-divergent collective
ordering across two process groups". The trainer keeps gradients and token statistics on separate
groups (`mod_groups.py`). To overlap communication with the slow part of a long batch it syncs the
statistics first when its batch is long and the gradients first otherwise. Each group alone sees
the same sequence of all-reduces on every process; only their interleaving differs, and a long
batch on one process only leaves each process waiting in the group the other has not entered.
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
        if length >= LONG:
            stats += sync_stats(local, groups)  # expect: BCL005
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
