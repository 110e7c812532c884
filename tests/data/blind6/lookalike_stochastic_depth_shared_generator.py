# verify: ok
"""Look-alike of stochastic_depth_rank_seeded_norm.py: whole blocks are still skipped, but alike on every rank.

The residual branch (with its all-reducing `CrossReplicaNorm`) is still dropped as a whole when a
random draw falls under the drop rate, and torch is still seeded with `seed + rank` for the data.
But the drop decisions come from one `torch.Generator` seeded with the config's seed alone and
shared by the blocks, which draw from it in the same order on every rank: the same blocks are
skipped everywhere, so the norms' all-reduces pair (the synchronised masks that
pytorch/vision#7722, https://github.com/pytorch/vision/issues/7722, suggests).
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
    def __init__(self, width: int, drop_rate: float, drop_generator: torch.Generator):
        super().__init__()
        self.drop_rate = drop_rate
        self.drop_generator = drop_generator
        self.body = nn.Sequential(nn.Linear(width, width), CrossReplicaNorm(width), nn.ReLU())

    def forward(self, x):
        if self.training and torch.rand((), generator=self.drop_generator) < self.drop_rate:
            return x
        return x + self.body(x)


class ResidualMLP(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        drops = torch.Generator().manual_seed(cfg.seed)  # the same stream on every rank
        self.blocks = nn.Sequential(
            *[StochasticDepthBlock(cfg.width, cfg.drop_rate, drops) for _ in range(cfg.depth)]
        )
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
