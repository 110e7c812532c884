# verify: ok
"""Look-alike: a discriminator step gated on the generator loss, with the loss averaged first.

The shape of ali-pytorch's "update D only while loss_g < limit", under Lightning Fabric: each
process prints its own generator loss (different per process), but the gate reads the loss after
`fabric.all_reduce(..., reduce_op="mean")`, so every process takes or skips the discriminator's
backward together.
"""
import os

import lightning as L
import torch
from torch import nn


def main():
    fabric = L.Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    torch.manual_seed(0)
    gen = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
    disc = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    gen, opt_g = fabric.setup(gen, torch.optim.Adam(gen.parameters(), 1e-2))
    disc, opt_d = fabric.setup(disc, torch.optim.Adam(disc.parameters(), 1e-2))
    bce = nn.BCEWithLogitsLoss()
    noise = torch.Generator().manual_seed(100 + int(os.environ["RANK"]))
    d_steps = 0
    for _ in range(6):
        real = torch.randn(16, 4, generator=noise) * 2
        z = torch.randn(16, 2, generator=noise) * 3
        opt_g.zero_grad()
        g = disc(gen(z))
        g_loss = bce(g, torch.ones_like(g))
        fabric.backward(g_loss)
        opt_g.step()
        print("local g_loss", round(g_loss.item(), 3), flush=True)
        if fabric.all_reduce(g_loss.detach(), reduce_op="mean").item() < 0.67:
            opt_d.zero_grad()
            r, f = disc(real), disc(gen(z).detach())
            fabric.backward(bce(r, torch.ones_like(r)) + bce(f, torch.zeros_like(f)))
            opt_d.step()
            d_steps += 1
    print("d_steps", d_steps, flush=True)
    fabric.barrier()


if __name__ == "__main__":
    main()
