# verify: hang
"""Data-parallel training over a hand-made shard: each process takes a contiguous block of
ceil(n / world) examples as a `Subset`, wraps it in a plain DataLoader (no DistributedSampler) and
pulls batches until its iterator runs out, averaging gradients with an all_reduce per step. Nine
examples: rank 0 holds five (three batches of two), rank 1 four (two batches).

Modelled on Lightning-AI/pytorch-lightning#20404
(https://github.com/Lightning-AI/pytorch-lightning/issues/20404): DDP over sharded data with
uneven inputs hangs once one rank runs out of batches.
"""
import math

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Subset, TensorDataset


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(9, 4), torch.randn(9, 1))
    per_rank = math.ceil(len(dataset) / world)
    shard = Subset(dataset, range(rank * per_rank, min((rank + 1) * per_rank, len(dataset))))
    batches = iter(DataLoader(shard, batch_size=2))
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    steps = 0
    while True:
        try:
            inputs, targets = next(batches)
        except StopIteration:
            break
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(inputs), targets).backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)  # expect: BCL005
            p.grad /= world
        optimizer.step()
        steps += 1
    print(f"rank {rank}: {steps} steps")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
