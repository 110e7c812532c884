# verify: hang
"""Per-rank file shards of an iterable dataset with mid-epoch validation every 3 batches.

Modelled on Lightning-AI/pytorch-lightning#6798
(https://github.com/Lightning-AI/pytorch-lightning/issues/6798): with DDP and an iterable
training dataset whose shards yield a different number of batches on each device, training
stalls once `val_check_interval > 1`: one process validates while the other trains. Here each
rank reads every second shard file of a row-count manifest (30 and 18 rows against 18 and 14),
so rank 0 yields 6 batches of 8 and rank 1 yields 4, and validation runs every 3 batches.
"""
import os
from dataclasses import dataclass

import lightning as L
import torch
from torch.utils.data import DataLoader, IterableDataset, TensorDataset

SHARD_MANIFEST = [("part-00000", 30), ("part-00001", 18), ("part-00002", 18), ("part-00003", 14)]


@dataclass
class TrainConfig:
    features: int = 8
    batch_size: int = 8
    val_check_interval: int = 3


def read_rows(name: str, rows: int, features: int):
    g = torch.Generator().manual_seed(int(name.split("-")[1]) + 7)
    x = torch.randn(rows, features, generator=g)
    y = x.mean(dim=1, keepdim=True)
    yield from zip(x, y)


class ShardStream(IterableDataset):
    def __init__(self, manifest, features: int):
        self.manifest = manifest
        self.features = features

    def __iter__(self):
        rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
        for name, rows in self.manifest[rank::world]:  # expect: BCL005
            yield from read_rows(name, rows, self.features)


class Regressor(L.LightningModule):
    def __init__(self, features: int):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(features, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main() -> None:
    cfg = TrainConfig()
    L.seed_everything(0)
    train_loader = DataLoader(ShardStream(SHARD_MANIFEST, cfg.features), batch_size=cfg.batch_size)
    vx = torch.randn(32, cfg.features)
    val_loader = DataLoader(TensorDataset(vx, vx.mean(dim=1, keepdim=True)), batch_size=8)
    trainer = L.Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        max_epochs=1,
        val_check_interval=cfg.val_check_interval,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(Regressor(cfg.features), train_loader, val_loader)


if __name__ == "__main__":
    main()
