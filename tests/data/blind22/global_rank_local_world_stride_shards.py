# verify: hang,error nproc=1 nnodes=2
"""Shards dealt with the global rank but strided by the node's process count.

Modelled on https://github.com/jasperzhong/GNNFlow/pull/57 (the distributed data sampler used a
wrong local world size; the fix takes `local_rank` and `local_world_size` together from the
launcher). Here `shards[rank::local_world_size]` mixes the two: on two nodes of one process each,
`LOCAL_WORLD_SIZE` is 1, so process 0 takes shards 0..4 and process 1 shards 1..4. Gradients are
averaged by hand after every batch, so process 0 makes two more rounds of all-reduces.
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
    local_world_size = int(os.environ["LOCAL_WORLD_SIZE"])
    world = dist.get_world_size()
    my_shards = list(range(len(SHARD_ROWS)))[rank::local_world_size]  # expect: BCL005

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
