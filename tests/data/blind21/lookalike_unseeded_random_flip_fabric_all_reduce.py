# verify: ok
"""Look-alike: an unseeded per-process `random.random()` too, but it only flips this rank's inputs.

Each process draws its own augmentation (a sign flip of the batch) from Python's unseeded RNG,
which is meant to differ between ranks; the router always samples soft and the usage is
all-reduced on every step, whatever was drawn. Compare
hard_sample_unseeded_random_fabric_all_reduce.py (https://github.com/NVlabs/FastGen/pull/34).
"""
import random

import torch
from lightning.fabric import Fabric
from torch import nn

HARD_SAMPLE_TH = 0.5
STEPS = 12
BUDGET = 0.5


class Router(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(8, 16)
        self.gate = nn.Linear(16, 4)
        self.head = nn.Linear(16, 1)

    def forward(self, x, hard):
        h = torch.tanh(self.enc(x))
        probs = nn.functional.gumbel_softmax(self.gate(h), tau=1.0, hard=hard)
        keep = probs[:, :2].sum(-1, keepdim=True)
        return self.head(h * keep), keep.mean()


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    torch.manual_seed(0)
    model = Router()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    model, opt = fabric.setup(model, opt)
    g = torch.Generator().manual_seed(10 + fabric.global_rank)

    for step in range(STEPS):
        x = torch.randn(16, 8, generator=g)
        y = x.sum(-1, keepdim=True)
        flip = random.random() > HARD_SAMPLE_TH
        if flip:
            x, y = -x, -y
        out, usage = model(x, False)
        loss = nn.functional.mse_loss(out, y)
        usage = fabric.all_reduce(usage, reduce_op="mean")
        loss = loss + (usage - BUDGET) ** 2
        opt.zero_grad()
        fabric.backward(loss)
        opt.step()
    fabric.barrier()


if __name__ == "__main__":
    main()
