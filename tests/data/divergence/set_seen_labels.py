# verify: error
"""Per-class counts for an epoch summary: each process builds the set of labels it saw in its own
shard and all-reduces one counter per label in that set. Rank 0's shard holds three classes,
rank 1's two, so rank 0 runs one all_reduce more.

Modelled on Lightning-AI/pytorch-lightning#19917
(https://github.com/Lightning-AI/pytorch-lightning/pull/19917): metrics logged under keys that
differed across ranks hung the reduction at the end of the epoch.
"""
import torch
import torch.distributed as dist

LABELS = [0, 1, 2, 1, 0, 1, 0, 1, 1, 0]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    shard = LABELS[rank * 5:(rank + 1) * 5]
    seen = set(shard)
    totals = {}
    for label in sorted(seen):
        count = torch.tensor([float(shard.count(label))])
        dist.all_reduce(count)  # expect: BCL005
        totals[label] = int(count.item())
    print(f"rank {rank}: class counts {totals}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
