# verify: ok
"""Correct: the data are sharded by a DistributedSampler, which pads the shards to equal length, so
`len(loader)` and the number of gradient all_reduces are the same on every process even with
n % world != 0."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    dist.init_process_group("gloo")
    world = dist.get_world_size()
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(9, 4), torch.randn(9, 1))
    loader = DataLoader(dataset, batch_size=2, sampler=DistributedSampler(dataset, shuffle=False))
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for inputs, targets in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(inputs), targets).backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world
        optimizer.step()
    print(f"rank {dist.get_rank()}: {len(loader)} steps")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
