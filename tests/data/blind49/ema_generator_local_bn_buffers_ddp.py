# verify: divergent check=EMA_BN_MEAN
"""An EMA copy of a GAN generator that averages the BatchNorm buffers of each process's own batches.

Modelled on https://github.com/Megvii-BaseDetection/YOLOX/issues/1176: the EMA model is updated on
every process from the live model's state dict, buffers included, while DDP runs with
`broadcast_buffers=False`; the maintainers confirm the EMA model's BatchNorm values differ between
devices. `ModelEMA.update` copies running statistics that each process computed from its own
noise and data, so the EMA generator (the one that is sampled and saved) differs per process.
"""
import copy
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

EMA_BN_MEAN = None


class ModelEMA:
    def __init__(self, model, decay=0.9):
        self.ema, self.decay = copy.deepcopy(model).eval(), decay
        self.ema.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        live = model.state_dict()
        for name, value in self.ema.state_dict().items():
            if value.dtype.is_floating_point:
                value.mul_(self.decay).add_(live[name], alpha=1 - self.decay)  # expect: BCL002


def main():
    global EMA_BN_MEAN
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
    EMA_BN_MEAN = round(ema.ema[1].running_mean.sum().item(), 4)
    print("EMA_BN_MEAN", EMA_BN_MEAN, flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
