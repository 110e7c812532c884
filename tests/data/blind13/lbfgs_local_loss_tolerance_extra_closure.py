# verify: hang
"""L-BFGS under DDP stops on a per-process loss test, so the processes call the closure a different number of times.

Modelled on pytorch/pytorch#30439 (https://github.com/pytorch/pytorch/issues/30439): "Connection
closed by peer when using L-BFGS and distributed computing (gloo)". `torch.optim.LBFGS.step(closure)`
re-evaluates the closure until, among other tests, `abs(loss - prev_loss) < tolerance_change`; the
gradients are averaged by the DDP backward, but the loss the closure returns is the process's own.
The readings are in mixed units: every second one was logged in kilometres, so the process that
holds them sees its loss barely move and leaves the L-BFGS loop after two evaluations, while the
other keeps evaluating (each evaluation is a backward pass with a gradient all-reduce).
"""
import os

import torch
from lightning.fabric import Fabric

# metres and kilometres interleaved; the target is 3 * reading
READINGS = [1.0, 0.0010, 1.5, 0.0015, 2.0, 0.0020, 2.5, 0.0025]
STEPS = 3


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    mine = torch.tensor(READINGS[fabric.global_rank::fabric.world_size]).unsqueeze(1)
    target = 3.0 * mine

    model = torch.nn.Linear(1, 1, bias=False)
    torch.nn.init.zeros_(model.weight)
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=10, tolerance_change=1e-6)
    model, optimizer = fabric.setup(model, optimizer)

    def closure():
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(mine), target)
        fabric.backward(loss)
        return loss

    for step in range(STEPS):
        loss = optimizer.step(closure)  # expect: BCL011
        fabric.print(f"step {step}: loss {float(loss):.6f}")
    fabric.barrier()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
