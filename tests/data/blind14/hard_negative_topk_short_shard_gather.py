# verify: error
"""Hard-negative mining: each process keeps its K hardest negatives and all-gathers them.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/pull/12630 (Lightning's
`gather_all_tensors` all-gathered into `zeros_like(result)` buckets, assuming every process holds
a tensor of one shape; the PR gathers the sizes first and pads).

`k = min(K, negatives.numel())` guards `topk` against a short batch, so the length of the tensor
handed to `all_gather` follows the process's own data: at the second step process 1's batch holds
three negatives, process 0's six.
"""
import torch
import torch.distributed as dist

K = 4
# (score, label) rows per process and step; label 0 marks a negative.
BATCHES = {
    0: [
        ([0.9, 0.2, 0.7, 0.4, 0.3, 0.8], [0, 0, 0, 0, 1, 0]),
        ([0.1, 0.6, 0.5, 0.9, 0.2, 0.3], [0, 0, 0, 0, 0, 0]),
    ],
    1: [
        ([0.3, 0.5, 0.8, 0.6, 0.1, 0.4], [0, 0, 1, 0, 0, 0]),
        ([0.7, 0.9, 0.2, 0.4, 0.6, 0.5], [1, 0, 1, 0, 0, 1]),
    ],
}


def hardest_negatives(scores, labels):
    negatives = scores[labels == 0]
    k = min(K, negatives.numel())
    return negatives.topk(k).values


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    memory = []
    for scores, labels in BATCHES[rank]:
        hard = hardest_negatives(torch.tensor(scores), torch.tensor(labels))
        bank = [torch.zeros_like(hard) for _ in range(world)]
        dist.all_gather(bank, hard)  # expect: BCL015
        memory.append(torch.cat(bank))
        margin = torch.cat(bank).mean()
        print(f"rank {rank}: bank of {sum(b.numel() for b in bank)}, mean {margin:.3f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
