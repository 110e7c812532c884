# verify: ok
"""Hand fix of aspect_ratio_buckets_drop_last_per_rank: buckets filled globally, then dealt out.

Every process groups the whole dataset into the same aspect-ratio batches (4 wide and 3 tall,
remainders dropped), cuts the list to a multiple of the world size and takes every second batch:
3 batches each, the same number of gradient all-reduces everywhere.
"""
import torch
from lightning.fabric import Fabric
from torch.utils.data import DataLoader, Dataset, Sampler

# 1 = wide (4x8), 0 = tall (8x4)
WIDE = [1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 0, 0, 0]


class Images(Dataset):
    def __len__(self):
        return len(WIDE)

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        shape = (3, 4, 8) if WIDE[i] else (3, 8, 4)
        return torch.randn(shape, generator=g), torch.tensor(float(i % 3))


class AspectRatioBatchSampler(Sampler):
    def __init__(self, size, batch_size, rank, world_size):
        self.size = size
        self.batch_size = batch_size
        self.rank = rank
        self.world_size = world_size

    def _all_batches(self):
        batches, buckets = [], {0: [], 1: []}
        for i in range(self.size):
            bucket = buckets[WIDE[i]]
            bucket.append(i)
            if len(bucket) == self.batch_size:
                batches.append(list(bucket))
                bucket.clear()
        return batches[: len(batches) - len(batches) % self.world_size]

    def __iter__(self):
        yield from self._all_batches()[self.rank :: self.world_size]

    def __len__(self):
        return len(self._all_batches()) // self.world_size


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
    batches = AspectRatioBatchSampler(len(ds), 2, fabric.global_rank, fabric.world_size)
    loader = DataLoader(ds, batch_sampler=batches)
    loader = fabric.setup_dataloaders(loader, use_distributed_sampler=False)
    for images, target in loader:
        loss = torch.nn.functional.mse_loss(model(images), target)
        opt.zero_grad()
        fabric.backward(loss)
        opt.step()
    fabric.barrier()
    fabric.print("epoch done")


if __name__ == "__main__":
    main()
