# verify: ok
"""Let rank 0 build the dataset cache first with a class-based context manager, and count the
vocabulary across ranks inside it.

Modelled on https://github.com/hao-ai-lab/FastVideo/pull/598 (rank 0 creates the cache and "block[s]
on barrier" while the others wait for it) and
https://github.com/Lightning-AI/pytorch-lightning/issues/20536 (a rank-0-first dataset builder with
a barrier that deadlocks). Inside the staggered block the ranks run one at a time, so a collective
there never meets its partner.
"""
from collections import Counter

import torch
import torch.distributed as dist

VOCAB = ["<unk>", "the", "cat", "sat", "on", "mat", "end"]


class RankZeroFirst:
    """Rank 0 runs the block, then the others (the `torch_distributed_zero_first` idiom)."""

    def __enter__(self):
        if dist.get_rank() != 0:
            dist.barrier()
        return self

    def __exit__(self, *exc):
        if dist.get_rank() == 0:
            dist.barrier()
        return False


def count_tokens(lines):
    counts = Counter(word for line in lines for word in line.split())
    local = torch.tensor([float(counts[w]) for w in VOCAB])
    dist.all_reduce(local)
    return local


def main():
    dist.init_process_group("gloo")
    shard = ["the cat sat", "on the mat"] if dist.get_rank() == 0 else ["the end"]
    with RankZeroFirst():
        lines = [line.lower().strip() for line in shard]  # local work only
    totals = count_tokens(lines)  # every rank at once
    print(f"rank {dist.get_rank()}: {dict(zip(VOCAB, totals.tolist()))}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
