# verify: hang
"""A file list shuffled with a per-rank seed before each rank takes its stride of files.

Modelled on https://github.com/sandyresearch/parcae/issues/10: the training script passed
`seed=cfg.seed + fabric.global_rank` to a parquet stream that shuffles its file names with that
seed and then keeps `files[rank::world]`, so the ranks' file sets are independent samples rather
than a partition. With files of different sizes the ranks also stream different numbers of
batches, and Fabric's DDP backward of the longer stream waits for a partner that has finished.
"""
import random

import torch
import lightning as L
from torch.utils.data import DataLoader, IterableDataset

CFG = {"seed": 1234, "batch_size": 8}
# rows per parquet file of the training set
MANIFEST = {"part-000.parquet": 40, "part-001.parquet": 8, "part-002.parquet": 24,
            "part-003.parquet": 8, "part-004.parquet": 32, "part-005.parquet": 16}


class ParquetStream(IterableDataset):
    def __init__(self, manifest, seed, rank, world):
        files = sorted(manifest)
        random.Random(seed).shuffle(files)
        self.files = files[rank::world]
        self.manifest = manifest

    def __iter__(self):
        for name in self.files:
            file_id = int(name[5:8])
            for row in range(self.manifest[name]):
                x = torch.full((4,), file_id + row / 100)
                yield x, x.mean(dim=0, keepdim=True)


def main():
    fabric = L.Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    fabric.seed_everything(CFG["seed"])
    stream = ParquetStream(
        MANIFEST, seed=CFG["seed"] + fabric.global_rank, rank=fabric.global_rank,  # expect: BCL005
        world=fabric.world_size,
    )
    loader = DataLoader(stream, batch_size=CFG["batch_size"])
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model, opt = fabric.setup(model, opt)
    steps = 0
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        fabric.backward(loss)
        opt.step()
        opt.zero_grad()
        steps += 1
    fabric.barrier()
    print(f"rank {fabric.global_rank}: {steps} steps over {stream.files}")


if __name__ == "__main__":
    main()
