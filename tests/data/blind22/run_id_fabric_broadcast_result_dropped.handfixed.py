# verify: ok
"""Hand fix: `run_id = fabric.broadcast(run_id, src=0)`, so every process uses rank 0's run id.

Modelled on https://github.com/DiamondLightSource/httomo/pull/721.
"""
import os
import tempfile
import uuid

import torch
from torch import nn

import lightning as L

BASE = os.path.join(tempfile.gettempdir(), f"blind22-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-fabric-runs")


def train_steps(fabric, model, opt, steps):
    for step in range(steps):
        x = torch.randn(8, 4)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        fabric.backward(loss)
        opt.step()


def main():
    fabric = L.Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    fabric.seed_everything(7)

    run_id = uuid.uuid4().hex[:8]
    run_id = fabric.broadcast(run_id, src=0)
    run_dir = os.path.join(BASE, run_id)

    net = nn.Linear(4, 1)
    model, opt = fabric.setup(net, torch.optim.SGD(net.parameters(), lr=0.1))
    train_steps(fabric, model, opt, 3)
    state = {"model": model, "optimizer": opt, "step": 3}
    fabric.save(os.path.join(run_dir, "last.ckpt"), state)

    # Resume, as a preempted job would: fresh objects, then the checkpoint of this run.
    net2 = nn.Linear(4, 1)
    model2, opt2 = fabric.setup(net2, torch.optim.SGD(net2.parameters(), lr=0.1))
    state = {"model": model2, "optimizer": opt2, "step": 0}
    fabric.load(os.path.join(run_dir, "last.ckpt"), state)
    train_steps(fabric, model2, opt2, 2)
    fabric.barrier()
    fabric.print(f"resumed from step {state['step']}")


if __name__ == "__main__":
    main()
