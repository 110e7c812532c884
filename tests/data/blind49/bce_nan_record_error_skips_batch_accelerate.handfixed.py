# verify: ok
"""Hand fix: NaN readings are replaced before the batch is used, so no process raises or skips.

A GAN that skips a batch whose discriminator loss raises, with accelerate.

Modelled on https://github.com/hanzhanggit/StackGAN-v2/issues/29: `binary_cross_entropy` on the
discriminator's output fails with "input >= 0. && input <= 1." when the output is NaN. Here each
process reads its own shard, where some records are NaN (a missing sensor reading); the NaN
reaches `F.binary_cross_entropy` through the sigmoid and raises `RuntimeError` on that process
only, and the loop skips the batch, with it the discriminator's backward (DDP's all-reduce).
"""
import os

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch import nn


def load_shard(seed):
    g = torch.Generator().manual_seed(seed)
    batches = torch.randn(6, 16, 4, generator=g)
    broken = torch.rand(6, generator=g) < 0.3
    batches[broken, 0, 0] = float("nan")
    return batches


def discriminator_loss(disc, real, fake):
    p_real, p_fake = torch.sigmoid(disc(real)), torch.sigmoid(disc(fake))
    return F.binary_cross_entropy(p_real, torch.ones_like(p_real)) + F.binary_cross_entropy(
        p_fake, torch.zeros_like(p_fake))


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    gen = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
    disc = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    opt_g = torch.optim.Adam(gen.parameters(), 1e-2)
    opt_d = torch.optim.Adam(disc.parameters(), 1e-2)
    gen, disc, opt_g, opt_d = accelerator.prepare(gen, disc, opt_g, opt_d)
    skipped = 0
    for real in load_shard(900 + int(os.environ["RANK"])):
        real = torch.nan_to_num(real, nan=0.0)
        z = torch.randn(16, 2)
        fake = gen(z)
        try:
            d_loss = discriminator_loss(disc, real, fake.detach())
        except RuntimeError as err:
            skipped += 1
            print("skipping batch:", err, flush=True)
            continue
        opt_d.zero_grad()
        accelerator.backward(d_loss)
        opt_d.step()
        p = torch.sigmoid(disc(fake))
        opt_g.zero_grad()
        accelerator.backward(F.binary_cross_entropy(p, torch.ones_like(p)))
        opt_g.step()
    print("skipped", skipped, flush=True)
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
