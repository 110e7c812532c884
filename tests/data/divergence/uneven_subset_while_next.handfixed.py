"""Before each step the processes agree (all_reduce MIN of a has-batch flag) whether every one of
them still has a batch; they stop together when any shard runs out."""
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
        batch = next(batches, None)
        have = torch.tensor([int(batch is not None)])
        dist.all_reduce(have, op=dist.ReduceOp.MIN)
        if not have.item():
            break
        inputs, targets = batch
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(inputs), targets).backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world
        optimizer.step()
        steps += 1
    print(f"rank {rank}: {steps} steps")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
