# verify: ok
"""Look-alike: the same short-batch guard on k, but k is the minimum over the processes (all-reduced).

A correct program that resembles `hard_negative_topk_short_shard_gather.py` (modelled on
https://github.com/Lightning-AI/pytorch-lightning/pull/12630).
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
    # The batch's k is the smallest over the processes, agreed before anyone gathers.
    k = torch.tensor([min(K, negatives.numel())])
    dist.all_reduce(k, op=dist.ReduceOp.MIN)
    return negatives.topk(int(k)).values


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    memory = []
    for scores, labels in BATCHES[rank]:
        hard = hardest_negatives(torch.tensor(scores), torch.tensor(labels))
        bank = [torch.zeros_like(hard) for _ in range(world)]
        dist.all_gather(bank, hard)
        memory.append(torch.cat(bank))
        margin = torch.cat(bank).mean()
        print(f"rank {rank}: bank of {sum(b.numel() for b in bank)}, mean {margin:.3f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
