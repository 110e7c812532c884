# verify: ok
"""Look-alike: Python's `random` is seeded with `SEED + RANK` next to a length-bucketed batch plan.

The per-process seed only draws augmentation noise; the bucketing shuffle uses its own
`random.Random(SEED)`, and the plan is cut to a multiple of the world size, so every process
builds the same plan and takes the same number of batches: correct.
"""
import os
import random

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

SEED = 0
LENGTHS = [3, 9, 4, 7, 2, 8, 5, 6, 9, 3, 7, 4, 8, 2, 6, 5, 9, 7, 3, 6, 4]


def bucket_batches(lengths, batch_size, rng):
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    rng.shuffle(batches)
    return batches


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    random.seed(SEED + int(os.environ["RANK"]))
    torch.manual_seed(SEED)
    model = DDP(torch.nn.Linear(1, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    plan = bucket_batches(LENGTHS, 4, random.Random(SEED))
    plan = plan[: len(plan) // world * world]
    for batch in plan[rank::world]:
        x = torch.tensor([[LENGTHS[i] / 10 + random.gauss(0, 0.01)] for i in batch])
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    count = torch.tensor([len(plan[rank::world])])
    dist.all_reduce(count)
    print("batches in all:", count.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
