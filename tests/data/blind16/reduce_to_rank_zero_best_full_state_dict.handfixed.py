# verify: ok
"""Best-checkpoint decision taken on a validation loss reduced to rank 0 only (FSDP2).

Modelled on pytorch/pytorch#77562 ("[FSDP] collective operation timeout ... at end of training
loop"): the validation loss was summed with `dist.reduce(..., op=SUM)`, so only the destination
rank held the global value; every rank then compared its own value with the best so far and
only some of them entered the save path, whose full state dict gathers the sharded parameters.
Here process 0's validation rows follow the training target and process 1's are a dropped-out
sensor (target 0): the global loss falls after the second epoch, process 1's own loss rises.

Hand fix: `dist.all_reduce(stats)` instead of `dist.reduce(stats, dst=0)`: every process compares
the same global loss and enters the save path together.
"""
import os
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from torch.distributed.fsdp import fully_shard

EPOCHS = 3


def run_dir():
    tag = f"blind16-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
    path = Path(tempfile.gettempdir()) / tag
    path.mkdir(exist_ok=True)
    return path


def data(rank):
    g = torch.Generator().manual_seed(100 + rank)
    x = torch.rand(8, 4, generator=g)
    y = 2.0 * x.sum(1, keepdim=True)
    vx = torch.rand(3, 4, generator=g) * (3.0 if rank == 0 else 0.5)
    vy = 2.0 * vx.sum(1, keepdim=True) if rank == 0 else torch.zeros(3, 1)
    return x, y, vx, vy


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    out = run_dir()
    model = nn.Sequential(nn.Linear(4, 1, bias=False))
    nn.init.zeros_(model[0].weight)
    fully_shard(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.02)
    x, y, vx, vy = data(rank)
    best = float("inf")
    for epoch in range(EPOCHS):
        for i in range(0, len(x), 2):
            loss = nn.functional.mse_loss(model(x[i:i + 2]), y[i:i + 2])
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            err = (model(vx) - vy).pow(2).sum()
        stats = torch.stack([err, torch.tensor(float(len(vx)))])
        dist.all_reduce(stats)
        val_loss = (stats[0] / stats[1]).item()
        if val_loss < best:
            best = val_loss
            state = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
            if rank == 0:
                torch.save(state, out / "best.pt")
        print(f"rank {rank} epoch {epoch}: val {val_loss:.3f} best {best:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
