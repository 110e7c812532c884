# verify: hang
"""Seed node ids are split over the processes with `torch.split(ids, ceil(n / world))[rank]` and
each process then walks its own chunk in mini-batches, averaging gradients with a helper imported
from another module of the program. 9 ids over 2 processes: rank 0 gets 5 (3 batches of 2),
rank 1 gets 4 (2 batches), so rank 0 runs one more gradient all_reduce than rank 1.

Modelled on dmlc/dgl#2539 "Current Node/EdgeDataLoader usage in examples may yield different number
of batches per epoch for multiple GPUs" (https://github.com/dmlc/dgl/issues/2539).
"""
import math

import torch
import torch.distributed as dist

from mod_gradsync import average_gradients

BATCH = 2


def my_seed_nodes(all_ids, rank, world):
    chunk = math.ceil(len(all_ids) / world)
    return torch.split(all_ids, chunk)[rank]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    feats = torch.randn(9, 4)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ids = my_seed_nodes(torch.arange(9), rank, world)
    for start in range(0, len(ids), BATCH):
        batch = feats[ids[start:start + BATCH]]
        opt.zero_grad()
        model(batch).pow(2).mean().backward()
        average_gradients(model)  # expect: BCL005
        opt.step()
    print(f"rank {rank}: trained on {len(ids)} nodes")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
