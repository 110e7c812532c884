"""Every process runs the same number of rounds, gathers the row counts first, pads its batch to
the largest and trims what it received."""
import math

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
    for start in range(0, math.ceil(NUM_EXAMPLES / world), BATCH):
        preds = model(mine[start:start + BATCH]).detach()
        counts = [torch.zeros(1, dtype=torch.int64) for _ in range(world)]
        dist.all_gather(counts, torch.tensor([len(preds)]))
        largest = max(int(c) for c in counts)
        padded = torch.cat([preds, preds.new_zeros(largest - len(preds), preds.shape[1])])
        buckets = [torch.zeros_like(padded) for _ in range(world)]
        dist.all_gather(buckets, padded)
        collected.extend(b[:int(c)] for b, c in zip(buckets, counts))
    print(f"rank {rank}: gathered {sum(len(b) for b in collected)} predictions")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
