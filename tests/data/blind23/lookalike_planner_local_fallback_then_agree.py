# verify: ok
"""Look-alike: the same try/except fallback around a planner, but the agreement comes after it.

Modelled on OpenPipe/ART#906 (https://github.com/OpenPipe/ART/issues/906): a rank-local
planning error (a ValueError from a pure local estimator) leaves the other rank waiting in the
next WORLD reduction of the planner's agreement step.

Each rank holds its own share of the sequences. `choose_micro_batch` tries the candidate sizes
from the largest down; for each it estimates the activation cost of the local share and asks
every rank to agree (`all_ranks_true`, an all-reduce MIN). The estimator knows only a few length
buckets and raises for a longer sequence. The caller catches that and falls back to micro-batch
1 -- but the exception left the helper before its first all-reduce, so the rank that holds the
long sequence (rank 1) starts training while rank 0 still waits for the agreement.

Here the planner is purely local (no collective inside the `try`), the failing rank's fallback
only sets its local proposal, and every rank then joins one all-reduce MIN of the proposals:
the same micro-batch everywhere.
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

MEMORY_BUDGET = 500
CANDIDATES = (8, 4, 2)
COST_PER_SEQUENCE = {64: 16, 128: 40, 256: 96}  # by padded length bucket
LENGTHS = [200, 300, 120, 90, 64, 250, 33, 128, 180, 60, 77, 200, 150, 40, 99, 111]


def length_bucket(length):
    for bucket in sorted(COST_PER_SEQUENCE):
        if length <= bucket:
            return bucket
    raise ValueError(f"no cost estimate for a sequence of {length} tokens")


def estimate(lengths, micro):
    return micro * COST_PER_SEQUENCE[length_bucket(max(lengths))]


def choose_local_micro_batch(lengths):
    for micro in CANDIDATES:
        if estimate(lengths, micro) <= MEMORY_BUDGET:
            return micro
    return 1


def agree_on_micro_batch(local_micro):
    plan = torch.tensor([local_micro])
    dist.all_reduce(plan, op=dist.ReduceOp.MIN)
    return int(plan.item())


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    local = LENGTHS[rank::world]
    try:
        local_micro = choose_local_micro_batch(local)
    except ValueError as err:
        print(f"[rank {rank}] planner failed ({err}); falling back to micro-batch 1")
        local_micro = 1
    micro = agree_on_micro_batch(local_micro)

    feats = torch.stack([torch.full((8,), n / 100.0) for n in local])
    target = feats.sum(dim=1, keepdim=True)
    for start in range(0, len(local), micro):
        x, y = feats[start:start + micro], target[start:start + micro]
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.barrier()
    print(f"[rank {rank}] trained with micro-batch {micro}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
