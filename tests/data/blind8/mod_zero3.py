"""ZeRO-3-style parameter sharding for the toy language models of zero3_generate_eos_per_rank.

Each process keeps only its slice of a weight's rows; every forward pass all-gathers the full
weight first, as DeepSpeed stage 3 does with its partitioned parameters.
"""
import torch
import torch.distributed as dist
from torch import nn


class ShardedLinear(nn.Module):
    def __init__(self, full_weight: torch.Tensor):
        super().__init__()
        rank, world = dist.get_rank(), dist.get_world_size()
        self.shard = nn.Parameter(full_weight.chunk(world)[rank].clone())

    def gathered_weight(self) -> torch.Tensor:
        pieces = [torch.zeros_like(self.shard) for _ in range(dist.get_world_size())]
        dist.all_gather(pieces, self.shard.detach())
        return torch.cat(pieces)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.gathered_weight().t()
