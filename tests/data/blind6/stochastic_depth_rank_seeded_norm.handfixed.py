# verify: ok
"""Hand-fixed twin of stochastic_depth_rank_seeded_norm.py.

Stochastic depth is applied the way timm's `drop_path` does it: the residual branch always runs,
and a per-sample keep mask (drawn from the per-rank RNG, which may differ) scales its output. The
branch's `CrossReplicaNorm` is therefore called once per block on every rank
(pytorch/pytorch#44957, https://github.com/pytorch/pytorch/issues/44957: the synchronising norm
must run the same number of times everywhere), and only the mask differs.
"""
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn


@dataclass
class ModelConfig:
    width: int = 8
    depth: int = 4
    drop_rate: float = 0.5
    seed: int = 1234
    steps: int = 6
    batch_size: int = 8


class CrossReplicaNorm(nn.Module):
    """BatchNorm over the global batch: sums, squares and counts are all-reduced in training."""

    def __init__(self, width: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))
        self.bias = nn.Parameter(torch.zeros(width))
        self.eps = eps

    def forward(self, x):
        if self.training:
            stats = torch.cat([x.sum(0), x.pow(2).sum(0), x.new_tensor([len(x)])])
            dist.all_reduce(stats)
            n = stats[-1]
            mean = stats[: x.shape[1]] / n
            var = stats[x.shape[1]: 2 * x.shape[1]] / n - mean.pow(2)
        else:
            mean, var = x.mean(0), x.var(0, unbiased=False)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class StochasticDepthBlock(nn.Module):
    def __init__(self, width: int, drop_rate: float):
        super().__init__()
        self.drop_rate = drop_rate
        self.body = nn.Sequential(nn.Linear(width, width), CrossReplicaNorm(width), nn.ReLU())

    def forward(self, x):
        out = self.body(x)
        if self.training and self.drop_rate > 0:
            keep = (torch.rand(len(x), 1) >= self.drop_rate).to(x.dtype)
            out = out * keep / (1 - self.drop_rate)
        return x + out


class ResidualMLP(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.blocks = nn.Sequential(*[StochasticDepthBlock(cfg.width, cfg.drop_rate) for _ in range(cfg.depth)])
        self.head = nn.Linear(cfg.width, 1)

    def forward(self, x):
        return self.head(self.blocks(x))


def average_gradients(model: nn.Module):
    for p in model.parameters():
        grad = p.grad if p.grad is not None else torch.zeros_like(p)
        dist.all_reduce(grad)
        p.grad = grad / dist.get_world_size()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    cfg = ModelConfig()
    torch.manual_seed(cfg.seed)
    model = ResidualMLP(cfg)  # same initial weights everywhere
    torch.manual_seed(cfg.seed + rank)  # different augmentation and data order per rank
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(cfg.steps):
        x = torch.randn(cfg.batch_size, cfg.width)
        y = x.sum(dim=1, keepdim=True)
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        average_gradients(model)
        optimizer.step()
        if rank == 0:
            print(f"step {step}: loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
