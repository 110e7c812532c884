# verify: ok
"""Look-alike: a validation loss reduced to rank 0 only, read and acted on by rank 0 only.

Like `reduce_to_rank_zero_best_full_state_dict`, the summed validation error is sent to rank 0
with `dist.reduce(..., dst=0)` and process 1's validation rows are a dropped-out sensor, but the
model is a plain DDP model, the comparison with the best loss and the save happen under
`if rank == 0:`, and the save is `torch.save(model.module.state_dict(), ...)`, which runs no
collective; process 1 never reads its (partial) copy of the statistics.
"""
import os
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

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
    net = nn.Sequential(nn.Linear(4, 1, bias=False))
    nn.init.zeros_(net[0].weight)
    model = DDP(net)
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
            err = (model.module(vx) - vy).pow(2).sum()
        stats = torch.stack([err, torch.tensor(float(len(vx)))])
        dist.reduce(stats, dst=0)
        if rank == 0:
            val_loss = (stats[0] / stats[1]).item()
            if val_loss < best:
                best = val_loss
                torch.save(model.module.state_dict(), out / "best.pt")
            print(f"epoch {epoch}: val {val_loss:.3f} best {best:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
