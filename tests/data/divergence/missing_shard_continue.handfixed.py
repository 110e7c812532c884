"""A missing shard contributes nothing, but its process still joins the round's all_reduce."""
import os
import tempfile

import torch
import torch.distributed as dist

NUM_SHARDS = 3


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    shard_dir = tempfile.mkdtemp()
    for index in range(NUM_SHARDS):
        if (rank, index) != (1, 2):  # the preprocessing job lost this one
            torch.save(torch.full((4,), float(index + rank)), os.path.join(shard_dir, f"shard{index}.pt"))
    stats = torch.zeros(2)
    for index in range(NUM_SHARDS):
        round_stats = torch.zeros(2)
        try:
            features = torch.load(os.path.join(shard_dir, f"shard{index}.pt"))
            round_stats = torch.tensor([features.sum().item(), float(features.numel())])
        except FileNotFoundError:
            print(f"rank {rank}: shard {index} missing, contributing nothing")
        dist.all_reduce(round_stats)
        stats += round_stats
    print(f"rank {rank}: global mean {(stats[0] / stats[1]).item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
