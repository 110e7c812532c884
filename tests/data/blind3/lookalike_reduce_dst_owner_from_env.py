# verify: ok
"""Look-alike of reduce_dst_owner_local_rank: the owner of the reduced histogram also comes from
an environment variable, but one the launcher sets alike for every process (STATS_OWNER, default
0), not the process's own LOCAL_RANK.
"""
import os
from dataclasses import dataclass, field

import torch
import torch.distributed as dist


def _env_owner():
    return int(os.environ.get("STATS_OWNER", "0"))


@dataclass
class StatsConfig:
    owner_rank: int = field(default_factory=_env_owner)
    n_bins: int = 4


def main():
    dist.init_process_group("gloo")
    cfg = StatsConfig()
    torch.manual_seed(dist.get_rank())
    counts = torch.histc(torch.rand(32), bins=cfg.n_bins, min=0.0, max=1.0)
    dist.reduce(counts, dst=cfg.owner_rank)
    if dist.get_rank() == cfg.owner_rank:
        print("histogram", counts.tolist())
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
