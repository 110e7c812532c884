# verify: ok
"""Agree on the data-shuffling seed by broadcasting rank 0's, keeping the broadcast's result.

Modelled on https://github.com/meta-pytorch/torchtune/issues/217 ("rank0 should broadcast the seed
[...] to rest of the ranks") and https://github.com/open-mmlab/mmdetection/pull/6457 (a random seed
drawn when none is set and broadcast to all ranks). `torch.distributed.broadcast` returns None, and
the run state keeps that None, read later in another method.
"""
import random
from dataclasses import dataclass
from typing import Optional

import torch
import torch.distributed as dist
from torch.utils.data import DistributedSampler


@dataclass
class RunState:
    seed: Optional[torch.Tensor] = None
    epoch: int = 0


class Trainer:
    def __init__(self, dataset, seed: Optional[int] = None):
        self.dataset = dataset
        self.state = RunState()
        self._init_seed(seed)

    def _init_seed(self, seed):
        drawn = seed if seed is not None else random.randrange(2**31)
        seed_t = torch.tensor([drawn], dtype=torch.long)
        dist.broadcast(seed_t, src=0)  # fills seed_t in place; returns None
        self.state.seed = seed_t

    def make_sampler(self):
        return DistributedSampler(self.dataset, shuffle=True, seed=int(self.state.seed.item()))


def main():
    dist.init_process_group("gloo")
    trainer = Trainer(list(range(10)))
    order = list(trainer.make_sampler())
    print(f"rank {dist.get_rank()} sees {order}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
