# verify: ok
"""Hand-fixed twin of running_norm_state_dict_sync_writer_only: every rank takes the state dict.

As Lightning-AI/pytorch-lightning#8218 (https://github.com/Lightning-AI/pytorch-lightning/pull/8218)
did, ``model.state_dict()`` (whose normaliser all-reduces its counts) is called on every rank when
a save is due; only the file write is left to the writer.
"""
import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn


class RunningNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("total", torch.zeros(dim))
        self.register_buffer("total_sq", torch.zeros(dim))
        self.register_buffer("count", torch.zeros(1))

    def forward(self, x):
        if self.training:
            self.total += x.detach().sum(0)
            self.total_sq += (x.detach() ** 2).sum(0)
            self.count += x.shape[0]
        mean = self.total / self.count.clamp_min(1)
        var = self.total_sq / self.count.clamp_min(1) - mean ** 2
        return (x - mean) / var.clamp_min(1e-4).sqrt()

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # a checkpoint holds the statistics of every rank's observations
        stats = torch.cat([self.total, self.total_sq, self.count])
        dist.all_reduce(stats)
        d = self.total.numel()
        destination[prefix + "total"] = stats[:d].clone()
        destination[prefix + "total_sq"] = stats[d:2 * d].clone()
        destination[prefix + "count"] = stats[2 * d:].clone()


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = RunningNorm(4)
        self.net = nn.Linear(4, 2)

    def forward(self, x):
        return self.net(self.norm(x))


class Checkpointer:
    def __init__(self, model, directory, every):
        self.model, self.directory, self.every = model, directory, every
        self.is_writer = dist.get_rank() == 0

    def maybe_save(self, step):
        if step % self.every:
            return
        state = self.model.state_dict()
        if self.is_writer:
            torch.save(state, os.path.join(self.directory, f"policy-{step}.pt"))


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(7)
    model = Policy()
    for p in model.parameters():
        dist.broadcast(p.data, src=0)
    ckpt_dir = os.path.join(
        tempfile.gettempdir(), f"blind9-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-policy"
    )
    os.makedirs(ckpt_dir, exist_ok=True)
    ckpt = Checkpointer(model, ckpt_dir, every=2)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(100 + rank)
    for step in range(1, 5):
        obs = torch.randn(8, 4, generator=gen) * (rank + 1)
        loss = model(obs).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world
        opt.step()
        ckpt.maybe_save(step)
    dist.barrier()
    if rank == 0:
        print("saved", sorted(os.listdir(ckpt_dir)))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
