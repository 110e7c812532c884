# verify: ok
"""Hand fix: the gradients are averaged first and the norm is taken on the average.

Skipping the discriminator's step on a large gradient norm, measured before averaging.

Modelled on https://github.com/Haian-Jin/LVSM/pull/19: the optimizer step is skipped when the
gradient norm is too large, with a `GradScaler` per optimizer. Here the generator is under DDP and
the discriminator's gradients are averaged by hand (`average_gradients`); the norm is taken on this
process's own unscaled gradients, before that average, so a process whose batch gives a large
norm skips the all-reduce the other process enters.
"""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def average_gradients(model):
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= dist.get_world_size()


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    gen = DDP(nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4)))
    disc = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    opt_g = torch.optim.Adam(gen.parameters(), 1e-2)
    opt_d = torch.optim.Adam(disc.parameters(), 1e-2)
    scaler_g, scaler_d = torch.amp.GradScaler("cpu"), torch.amp.GradScaler("cpu")
    bce = nn.BCEWithLogitsLoss()
    data = torch.Generator().manual_seed(40 + int(os.environ["RANK"]))
    skipped = 0
    for _ in range(6):
        real = torch.randn(16, 4, generator=data) * torch.rand(1, generator=data) * 20
        z = torch.randn(16, 2)
        fake = gen(z)
        opt_d.zero_grad()
        r, f = disc(real), disc(fake.detach())
        scaler_d.scale(bce(r, torch.ones_like(r)) + bce(f, torch.zeros_like(f))).backward()
        average_gradients(disc)
        scaler_d.unscale_(opt_d)
        norm = torch.nn.utils.clip_grad_norm_(disc.parameters(), float("inf"))
        if norm > 5.0:
            skipped += 1
        else:
            scaler_d.step(opt_d)
        scaler_d.update()
        opt_g.zero_grad()
        g = disc(fake)
        scaler_g.scale(bce(g, torch.ones_like(g))).backward()
        scaler_g.step(opt_g)
        scaler_g.update()
    print("skipped", skipped, flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
