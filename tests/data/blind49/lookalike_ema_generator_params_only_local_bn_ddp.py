# verify: ok check=EMA_W_MEAN
"""Look-alike: an EMA copy of a GAN generator that averages parameters only.

The generator runs under DDP with `broadcast_buffers=False`, so its BatchNorm running statistics
differ per process (printed locally), but `ModelEMA.update` averages only the parameters, which
DDP's gradient averaging keeps identical; the EMA model keeps its own buffers.
"""
import copy
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

EMA_W_MEAN = None


class ModelEMA:
    def __init__(self, model, decay=0.9):
        self.ema, self.decay = copy.deepcopy(model).eval(), decay
        self.ema.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        live = dict(model.named_parameters())
        for name, value in self.ema.named_parameters():
            value.mul_(self.decay).add_(live[name], alpha=1 - self.decay)


def main():
    global EMA_W_MEAN
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    gen = nn.Sequential(nn.Linear(2, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 4))
    disc = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    ema = ModelEMA(gen)
    gen = DDP(gen, broadcast_buffers=False)
    disc = DDP(disc)
    opt_g = torch.optim.Adam(gen.parameters(), 1e-2)
    opt_d = torch.optim.Adam(disc.parameters(), 1e-2)
    bce = nn.BCEWithLogitsLoss()
    noise = torch.Generator().manual_seed(700 + int(os.environ["RANK"]))
    for _ in range(5):
        real = torch.randn(16, 4, generator=noise) + 1.0
        z = torch.randn(16, 2, generator=noise)
        fake = gen(z)
        opt_d.zero_grad()
        r, f = disc(real), disc(fake.detach())
        (bce(r, torch.ones_like(r)) + bce(f, torch.zeros_like(f))).backward()
        opt_d.step()
        opt_g.zero_grad()
        g = disc(fake)
        bce(g, torch.ones_like(g)).backward()
        opt_g.step()
        ema.update(gen.module)
    EMA_W_MEAN = round(sum(p.sum().item() for p in ema.ema.parameters()), 4)
    print("local bn mean", gen.module[1].running_mean.sum().item(), "EMA_W_MEAN", EMA_W_MEAN, flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
