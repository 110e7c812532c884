# verify: error
"""Normalisation statistics are cached on each process's own disk (a per-rank cache file, as on
nodes without a shared filesystem). On a cache miss they are recomputed over the whole dataset,
which sums the per-process moments with an all_reduce. Rank 0's cache survives from an earlier run
and rank 1's does not, so only rank 1 calls the all_reduce.

Modelled on BiomedSciAI/fuse-med-ml#284 "Caching should only be done on rank 0"
(https://github.com/BiomedSciAI/fuse-med-ml/issues/284) and snowflakedb/ArcticTraining#105
"Switch to DistributedSampler" (https://github.com/snowflakedb/ArcticTraining/pull/105), on
per-process caches and the ranks that load versus process data.
"""
import os
import tempfile

import torch
import torch.distributed as dist


def compute_stats(x):
    moments = torch.stack([x.sum(0), (x * x).sum(0), torch.full((x.shape[1],), float(len(x)))])
    dist.all_reduce(moments)
    mean = moments[0] / moments[2]
    return mean, (moments[1] / moments[2] - mean**2).sqrt()


def load_or_compute_stats(x, cache_file):
    if os.path.exists(cache_file):
        return torch.load(cache_file)
    stats = compute_stats(x)  # expect: BCL005
    torch.save(stats, cache_file)
    return stats


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    cache_dir = os.path.join(tempfile.gettempdir(), f"blind-node{rank}-{os.environ.get('MASTER_PORT', 'x')}")
    os.makedirs(cache_dir, exist_ok=True)
    cache_file = os.path.join(cache_dir, "norm_stats.pt")
    if rank == 0:  # left over from a previous run on this node
        torch.save((torch.zeros(3), torch.ones(3)), cache_file)
    elif os.path.exists(cache_file):
        os.remove(cache_file)
    torch.manual_seed(rank)
    x = torch.randn(16, 3)
    mean, std = load_or_compute_stats(x, cache_file)
    x = (x - mean) / std
    total = x.sum(0)
    dist.all_reduce(total)
    print(f"rank {rank}: {total.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
