# verify: ok
"""Hand fix: the generator loss that gates the discriminator step is averaged over processes.

A GAN whose discriminator is updated only while the generator's loss stays low.

Modelled on https://github.com/9310gaurav/ali-pytorch/issues/4: the training loop updates the
discriminator only when `loss_g < 3.5` (a stabilising hack). Under DDP each process compares the
generator loss of its own batch, so `AdversarialStep.discriminator_step` runs the discriminator's
backward (DDP's gradient all-reduce) on one process and returns early on the other.
"""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def make_shard(seed):
    g = torch.Generator().manual_seed(seed)
    scale = 0.5 + 4.0 * torch.rand(1, generator=g)
    return torch.randn(6, 16, 4, generator=g) * scale


class AdversarialStep:
    def __init__(self, gen, disc, g_limit):
        self.gen, self.disc, self.g_limit = gen, disc, g_limit
        self.opt_g = torch.optim.Adam(gen.parameters(), 1e-2)
        self.opt_d = torch.optim.Adam(disc.parameters(), 1e-2)
        self.bce = nn.BCEWithLogitsLoss()

    def generator_step(self, z):
        self.opt_g.zero_grad()
        logits = self.disc(self.gen(z))
        loss = self.bce(logits, torch.ones_like(logits))
        loss.backward()
        self.opt_g.step()
        shared = loss.detach().clone()
        dist.all_reduce(shared)
        return shared.item() / dist.get_world_size()

    def discriminator_step(self, real, z, g_loss):
        if g_loss >= self.g_limit:
            return False
        self.opt_d.zero_grad()
        real_logits = self.disc(real)
        fake_logits = self.disc(self.gen(z).detach())
        loss = self.bce(real_logits, torch.ones_like(real_logits)) + self.bce(
            fake_logits, torch.zeros_like(fake_logits))
        loss.backward()
        self.opt_d.step()
        return True


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    gen = DDP(nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4)))
    disc = DDP(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)))
    step = AdversarialStep(gen, disc, g_limit=0.67)
    seed = 100 + int(os.environ["RANK"])
    shard, noise = make_shard(seed), torch.Generator().manual_seed(seed)
    d_steps = 0
    for real in shard:
        z = torch.randn(16, 2, generator=noise) * 3
        g_loss = step.generator_step(z)
        d_steps += step.discriminator_step(real, z, g_loss)
    print("g_loss", round(g_loss, 3), "d_steps", d_steps, flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
