# verify: hang
"""Modelled on https://github.com/pytorch/pytorch/issues/39706: dist.reduce called with a `dst`
that differs between ranks. Here the owner of the reduced statistics comes from a config whose
default reads LOCAL_RANK, so every rank names itself the destination.
"""
import os
from dataclasses import dataclass, field

import torch
import torch.distributed as dist


def _env_local_rank():
    return int(os.environ.get("LOCAL_RANK", "0"))


@dataclass
class StatsConfig:
    owner_rank: int = field(default_factory=_env_local_rank)
    n_bins: int = 4


class HistogramCollector:
    def __init__(self, cfg):
        self.cfg = cfg
        self.counts = torch.zeros(cfg.n_bins)

    def observe(self, values):
        self.counts += torch.histc(values, bins=self.cfg.n_bins, min=0.0, max=1.0)

    def flush(self):
        dist.reduce(self.counts, dst=self.cfg.owner_rank)  # expect: BCL009
        if dist.get_rank() == self.cfg.owner_rank:
            print("histogram", self.counts.tolist())
        self.counts.zero_()


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(dist.get_rank())
    collector = HistogramCollector(StatsConfig())
    for _ in range(3):
        collector.observe(torch.rand(16))
    collector.flush()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
