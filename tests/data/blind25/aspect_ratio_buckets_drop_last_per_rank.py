# verify: hang,error
"""Aspect-ratio buckets filled from each process's own share, each bucket dropping its remainder.

Modelled on https://github.com/open-mmlab/mmdetection/issues/11114 (MultiDataAspectRatioBatchSampler
under DDP: "in different ranks, the number of batch may be different and thus makes the whole job
hanging"). The batch sampler wraps a DistributedSampler and groups this process's images into wide
and tall buckets, yielding a batch whenever a bucket fills and dropping what is left of each
bucket at the end. Process 0's share holds 5 wide and 3 tall images (2 + 1 batches of 2), process
1's 4 and 4 (2 + 2 batches): process 1's fourth `fabric.backward` runs DDP's gradient all-reduce
alone while process 0 waits in the barrier at the end of the epoch.
"""
import torch
from lightning.fabric import Fabric
from torch.utils.data import DataLoader, Dataset, DistributedSampler, Sampler

# 1 = wide (4x8), 0 = tall (8x4); index i goes to process i % 2
WIDE = [1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 0, 0, 0]


class Images(Dataset):
    def __len__(self):
        return len(WIDE)

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        shape = (3, 4, 8) if WIDE[i] else (3, 8, 4)
        return torch.randn(shape, generator=g), torch.tensor(float(i % 3))


class AspectRatioBatchSampler(Sampler):
    def __init__(self, sampler, batch_size):
        self.sampler = sampler
        self.batch_size = batch_size

    def __iter__(self):
        buckets = {0: [], 1: []}
        for i in self.sampler:
            bucket = buckets[WIDE[i]]
            bucket.append(i)
            if len(bucket) == self.batch_size:
                yield list(bucket)
                bucket.clear()

    def __len__(self):
        mine = list(self.sampler)
        wide = sum(WIDE[i] for i in mine)
        return wide // self.batch_size + (len(mine) - wide) // self.batch_size


class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.head = torch.nn.Linear(4, 1)

    def forward(self, x):
        return self.head(self.conv(x).mean(dim=(2, 3))).squeeze(-1)


def main() -> None:
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    fabric.seed_everything(0)
    module = Regressor()
    model, opt = fabric.setup(module, torch.optim.SGD(module.parameters(), lr=0.01))
    ds = Images()
    sampler = DistributedSampler(ds, num_replicas=fabric.world_size, rank=fabric.global_rank, shuffle=False)
    loader = DataLoader(ds, batch_sampler=AspectRatioBatchSampler(sampler, batch_size=2))
    loader = fabric.setup_dataloaders(loader, use_distributed_sampler=False)
    for images, target in loader:
        loss = torch.nn.functional.mse_loss(model(images), target)
        opt.zero_grad()
        fabric.backward(loss)  # expect: BCL011
        opt.step()
    fabric.barrier()
    fabric.print("epoch done")


if __name__ == "__main__":
    main()
