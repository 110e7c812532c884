# verify: ok
"""Hand fix: the accuracy that freezes the discriminator is averaged over processes first.

Freezing a discriminator that has become too strong, decided on each process's own batch.

Modelled on https://github.com/ShiqiYu/OpenGait/issues/230: part of the network is frozen
(`requires_grad_(False)`) during training, after DDP has been set up, and DDP then fails with
"Expected to have finished reduction in the prior iteration". Here the discriminator is frozen when
its accuracy on this process's batch passes 0.6, so one process stops the discriminator's backward
(and sends no gradients for it in the generator's backward) while the other goes on.
"""
import os

import lightning as L
import torch
from torch import nn


def make_shard(seed):
    g = torch.Generator().manual_seed(seed)
    scale = 0.2 + 5.0 * torch.rand(1, generator=g)
    return torch.randn(8, 16, 4, generator=g) * scale + 2.0


def main():
    fabric = L.Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    torch.manual_seed(0)
    gen = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
    disc = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    gen, opt_g = fabric.setup(gen, torch.optim.Adam(gen.parameters(), 1e-2))
    disc, opt_d = fabric.setup(disc, torch.optim.Adam(disc.parameters(), 1e-2))
    bce = nn.BCEWithLogitsLoss()
    shard = make_shard(300 + int(os.environ["RANK"]))
    frozen = False
    for real in shard:
        z = torch.randn(16, 2)
        if not frozen:
            opt_d.zero_grad()
            real_logits, fake_logits = disc(real), disc(gen(z).detach())
            d_loss = bce(real_logits, torch.ones_like(real_logits)) + bce(
                fake_logits, torch.zeros_like(fake_logits))
            fabric.backward(d_loss)
            opt_d.step()
            acc = ((real_logits > 0).float().mean() + (fake_logits < 0).float().mean()) / 2
            acc = fabric.all_reduce(acc.detach(), reduce_op="mean")
            if acc.item() > 0.6:
                disc.requires_grad_(False)
                frozen = True
        opt_g.zero_grad()
        g_logits = disc(gen(z))
        fabric.backward(bce(g_logits, torch.ones_like(g_logits)))
        opt_g.step()
    print("frozen", frozen, flush=True)
    fabric.barrier()


if __name__ == "__main__":
    main()
