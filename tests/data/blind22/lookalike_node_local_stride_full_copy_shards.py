# verify: ok nproc=1 nnodes=2
"""Look-alike: shards strided by the node's process count with the node-local rank, `shards[local_rank::local_world_size]`.

Each node splits the shard list among its own processes; with one process per node both
processes read every shard (each node holds a full copy of the data, as in a node-replicated
setup), so they make the same number of steps and every all-reduce is met.
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
    local_rank = int(os.environ["LOCAL_RANK"])
    local_world_size = int(os.environ["LOCAL_WORLD_SIZE"])
    world = dist.get_world_size()
    my_shards = list(range(len(SHARD_ROWS)))[local_rank::local_world_size]

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
