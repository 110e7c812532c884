# verify: ok nproc=1 nnodes=2
"""Hand fix: the shards are strided by the global world size, `shards[rank::world]`, so the two
processes take shards 0, 2, 4 and 1, 3 — and, with the batch count evened out by cycling the
shorter list, as many steps each.

Modelled on https://github.com/jasperzhong/GNNFlow/pull/57.
"""
import os

import torch
import torch.distributed as dist
from torch import nn

SHARD_ROWS = [8, 8, 8, 8, 8]
BATCH = 4


def load_shard(index):
    g = torch.Generator().manual_seed(index)
    x = torch.randn(SHARD_ROWS[index], 5, generator=g)
    return x, x.sum(dim=1, keepdim=True)


def main():
    dist.init_process_group("gloo")
    rank = int(os.environ["RANK"])
    world = dist.get_world_size()
    my_shards = list(range(len(SHARD_ROWS)))[rank::world]
    per_process = -(-len(SHARD_ROWS) // world)
    my_shards = (my_shards * per_process)[:per_process]

    torch.manual_seed(0)
    model = nn.Linear(5, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    steps = 0
    for index in my_shards:
        x, y = load_shard(index)
        for start in range(0, len(x), BATCH):
            loss = nn.functional.mse_loss(model(x[start:start + BATCH]), y[start:start + BATCH])
            opt.zero_grad()
            loss.backward()
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
            opt.step()
            steps += 1
    print(f"rank {rank}: {steps} steps over shards {my_shards}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
