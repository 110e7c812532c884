# verify: ok
"""Every process pads its chunk to the longest chunk (repeating its own ids), so all take the same
number of steps and run the same all_reduces."""
import math

import torch
import torch.distributed as dist

from mod_gradsync import average_gradients

BATCH = 2


def my_seed_nodes(all_ids, rank, world):
    chunk = math.ceil(len(all_ids) / world)
    mine = torch.split(all_ids, chunk)[rank]
    if len(mine) < chunk:
        mine = torch.cat([mine, mine[: chunk - len(mine)]])
    return mine


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
        average_gradients(model)
        opt.step()
    print(f"rank {rank}: trained on {len(ids)} nodes")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
