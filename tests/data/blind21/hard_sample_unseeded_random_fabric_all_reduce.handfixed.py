# verify: ok
"""Hand fix: the hard/soft draw comes from a generator seeded with the step, the same on every rank.

Modelled on https://github.com/NVlabs/FastGen/pull/34 (review comment "`hard_sample` not
synchronized across DP ranks": `hard_sample = random.random() > self.hard_sample_th` uses Python's
per-process RNG, so data-parallel ranks decide independently; the suggested fix derives the
decision from the iteration counter). Here a hard step also enforces the compute budget on the
global batch, so it all-reduces the router's usage with `fabric.all_reduce`; a soft step does
not. Ranks that drew differently enter different collectives.
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
        hard_sample = random.Random(1000 + step).random() > HARD_SAMPLE_TH
        out, usage = model(x, hard_sample)
        loss = nn.functional.mse_loss(out, y)
        if hard_sample:
            usage = fabric.all_reduce(usage, reduce_op="mean")
        loss = loss + (usage - BUDGET) ** 2
        opt.zero_grad()
        fabric.backward(loss)
        opt.step()
    fabric.barrier()


if __name__ == "__main__":
    main()
