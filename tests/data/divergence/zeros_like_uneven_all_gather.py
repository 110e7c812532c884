# verify: error
"""Evaluation gathers every process's predictions into buckets made with
`torch.zeros_like(preds)`, the shape of the local batch. Both processes run two rounds, but the
last batch is uneven (seven examples split by rank, batches of two): rank 0 sends two rows where
rank 1 expects one, and gloo aborts on the size mismatch.

Modelled on Lightning-AI/pytorch-lightning#7773
(https://github.com/Lightning-AI/pytorch-lightning/issues/7773): `all_gather` of tensors whose
first dimension differed between devices froze instead of raising.
"""
import torch
import torch.distributed as dist

NUM_EXAMPLES, BATCH = 7, 2


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    inputs = torch.randn(NUM_EXAMPLES, 3)
    model = torch.nn.Linear(3, 2)
    mine = inputs[rank::world]
    collected = []
    for start in range(0, len(mine), BATCH):
        preds = model(mine[start:start + BATCH]).detach()
        buckets = [torch.zeros_like(preds) for _ in range(world)]
        dist.all_gather(buckets, preds)  # expect: BCL007
        collected.extend(buckets)
    print(f"rank {rank}: gathered {sum(len(b) for b in collected)} predictions")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
