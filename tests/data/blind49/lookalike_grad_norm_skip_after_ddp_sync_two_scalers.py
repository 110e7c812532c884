# verify: ok check=SKIPPED
"""Look-alike: a discriminator step skipped on a large gradient norm, measured after DDP's average.

Two `GradScaler`s, one per model, and a skip when the discriminator's gradient norm passes a
limit, as in LVSM's fix; each process's batch differs in scale, but the discriminator is under DDP,
so the norm is taken on gradients the backward has already averaged and every process skips the
same steps.
"""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

SKIPPED = None


def main():
    global SKIPPED
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    gen = DDP(nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4)))
    disc = DDP(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)))
    opt_g = torch.optim.Adam(gen.parameters(), 1e-2)
    opt_d = torch.optim.Adam(disc.parameters(), 1e-2)
    scaler_g, scaler_d = torch.amp.GradScaler("cpu"), torch.amp.GradScaler("cpu")
    bce = nn.BCEWithLogitsLoss()
    data = torch.Generator().manual_seed(40 + int(os.environ["RANK"]))
    skipped = []
    for step in range(6):
        real = torch.randn(16, 4, generator=data) * torch.rand(1, generator=data) * 20
        fake = gen(torch.randn(16, 2))
        opt_d.zero_grad()
        r, f = disc(real), disc(fake.detach())
        scaler_d.scale(bce(r, torch.ones_like(r)) + bce(f, torch.zeros_like(f))).backward()
        scaler_d.unscale_(opt_d)
        if torch.nn.utils.clip_grad_norm_(disc.parameters(), float("inf")) > 5.0:
            skipped.append(step)
        else:
            scaler_d.step(opt_d)
        scaler_d.update()
        opt_g.zero_grad()
        g = disc(fake)
        scaler_g.scale(bce(g, torch.ones_like(g))).backward()
        scaler_g.step(opt_g)
        scaler_g.update()
    SKIPPED = ",".join(map(str, skipped))
    print("SKIPPED", SKIPPED, flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
