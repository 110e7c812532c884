# verify: ok check=PARAM_SUM
"""Hand fix: the broadcast list is named and its element read back.

Modelled on pytorch/pytorch#56142 (https://github.com/pytorch/pytorch/issues/56142):
`torch.distributed.broadcast_object_list([dummy], src=0)` leaves `dummy` unchanged on the
receiving ranks; only the list passed in is filled, and here that list is a temporary.

Each process draws its own trial configuration from an unseeded generator (as a sweep agent
would), then "shares" it with `dist.broadcast_object_list([cfg], src=0)`. The received copy goes
into the temporary list; `cfg` stays each process's own draw. The model built from it has a
different width or depth on each process (DDP refuses the parameter shapes), or, if the
architecture happens to agree, a different learning rate, so the replicas drift apart.

Here the list is kept and `cfg = box[0]` takes process 0's draw on every process.
"""
import random

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

PARAM_SUM = None


def sample_trial(rng):
    return {
        "hidden": rng.choice([8, 12, 16, 24, 32, 48, 64, 96]),
        "depth": rng.choice([1, 2, 3]),
        "lr": 10 ** rng.uniform(-3, -1),
    }


def build(cfg):
    layers, width = [], 6
    for _ in range(cfg["depth"]):
        layers += [nn.Linear(width, cfg["hidden"]), nn.Tanh()]
        width = cfg["hidden"]
    return nn.Sequential(*layers, nn.Linear(width, 1))


def main():
    global PARAM_SUM
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    cfg = sample_trial(random.Random())
    box = [cfg]
    dist.broadcast_object_list(box, src=0)
    cfg = box[0]
    print(f"[rank {rank}] trial {cfg}")

    torch.manual_seed(0)
    model = DDP(build(cfg))
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    gen = torch.Generator().manual_seed(100 + rank)
    for _ in range(5):
        x = torch.randn(4, 6, generator=gen)
        loss = (model(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    PARAM_SUM = round(sum(p.detach().sum().item() for p in model.parameters()), 6)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
