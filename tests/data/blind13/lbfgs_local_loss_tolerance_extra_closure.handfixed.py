# verify: ok
"""Hand-fixed: the closure returns the loss averaged over the processes.

L-BFGS's stopping tests then see the same value on every process, so every process evaluates the
closure the same number of times (the decision no longer rests on a per-process loss; see
pytorch/pytorch#30439).
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
        return fabric.all_reduce(loss.detach(), reduce_op="mean")

    for step in range(STEPS):
        loss = optimizer.step(closure)
        fabric.print(f"step {step}: loss {float(loss):.6f}")
    fabric.barrier()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
