# verify: ok
"""Look-alike: L-BFGS on per-process data under DDP, but one closure evaluation per step.

The same mixed-unit readings and a per-process loss, but `max_iter=1`: `LBFGS.step` evaluates the
closure once and never reaches its loss-change test, so every process runs one backward pass (one
gradient all-reduce) per step.
"""
import os

import torch
from lightning.fabric import Fabric

READINGS = [1.0, 0.0010, 1.5, 0.0015, 2.0, 0.0020, 2.5, 0.0025]
STEPS = 6


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    mine = torch.tensor(READINGS[fabric.global_rank::fabric.world_size]).unsqueeze(1)
    target = 3.0 * mine

    model = torch.nn.Linear(1, 1, bias=False)
    torch.nn.init.zeros_(model.weight)
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=1, tolerance_change=1e-6)
    model, optimizer = fabric.setup(model, optimizer)

    def closure():
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(mine), target)
        fabric.backward(loss)
        return loss

    for step in range(STEPS):
        loss = optimizer.step(closure)
        fabric.print(f"step {step}: loss {float(loss):.6f}")
    fabric.barrier()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
