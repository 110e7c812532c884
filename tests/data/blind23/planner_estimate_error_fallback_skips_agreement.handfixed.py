# verify: ok
"""Hand fix: the estimator's failure becomes a "does not fit" vote inside the helper.

Modelled on OpenPipe/ART#906 (https://github.com/OpenPipe/ART/issues/906): a rank-local
planning error (a ValueError from a pure local estimator) leaves the other rank waiting in the
next WORLD reduction of the planner's agreement step.

Each rank holds its own share of the sequences. `choose_micro_batch` tries the candidate sizes
from the largest down; for each it estimates the activation cost of the local share and asks
every rank to agree (`all_ranks_true`, an all-reduce MIN). The estimator knows only a few length
buckets and raises for a longer sequence. The caller catches that and falls back to micro-batch
1 -- but the exception left the helper before its first all-reduce, so the rank that holds the
long sequence (rank 1) starts training while rank 0 still waits for the agreement.

Here every rank votes on every candidate, the one that cannot estimate voting "does not fit",
so all ranks leave the planner together with the same micro-batch (1 here).
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


def all_ranks_true(flag):
    votes = torch.tensor([int(flag)])
    dist.all_reduce(votes, op=dist.ReduceOp.MIN)
    return bool(votes.item())


def choose_micro_batch(lengths):
    for micro in CANDIDATES:
        try:
            fits = estimate(lengths, micro) <= MEMORY_BUDGET
        except ValueError:
            fits = False
        if all_ranks_true(fits):
            return micro
    return 1


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    local = LENGTHS[rank::world]
    try:
        micro = choose_micro_batch(local)
    except ValueError as err:
        print(f"[rank {rank}] planner failed ({err}); falling back to micro-batch 1")
        micro = 1

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
