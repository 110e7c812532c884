# verify: ok
"""Hand fix: the validation shards are cut by sample count (20 and 20), so both processes run
the same number of validation batches and per-step reductions.

Validation shards balanced by rows, not samples, with a per-step synced validation log.

Modelled on Lightning-AI/pytorch-lightning#19272
(https://github.com/Lightning-AI/pytorch-lightning/issues/19272): the LightningDataModule is
given `world_size` and `global_rank`, splits the data into one shard per process and each
process loads its own shard, so each process has its own DataLoader; the script freezes at the
end of validation. Here the shards are balanced by the number of rows of the variable-length
samples, so rank 0 gets 27 validation samples and rank 1 gets 13 (4 and 2 batches), and
`validation_step` logs the loss with `on_step=True, sync_dist=True`, an all-reduce per batch:
rank 0's third and fourth reductions have no partner batch on rank 1.
"""
from dataclasses import dataclass

import lightning as L
import torch
from torch.utils.data import DataLoader, Dataset


@dataclass
class DataConfig:
    features: int = 6
    samples: int = 40
    batch_size: int = 8


class Records(Dataset):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def make_records(cfg: DataConfig, seed: int):
    g = torch.Generator().manual_seed(seed)
    lengths = [1 + (i % 5) if i < 24 else 6 for i in range(cfg.samples)]  # rows per sample
    out = []
    for n in lengths:
        rows = torch.randn(n, cfg.features, generator=g)
        out.append((rows.mean(dim=0), rows.std(dim=0, unbiased=False).mean().unsqueeze(0)))
    return out, lengths


def shard_by_rows(records, lengths, world_size: int):
    """Cut the record list into contiguous shards holding about the same number of rows."""
    budget = sum(lengths) / world_size
    shards, current, acc = [], [], 0
    for rec, n in zip(records, lengths):
        if acc >= budget * (len(shards) + 1) and len(shards) < world_size - 1:
            shards.append(current)
            current = []
        current.append(rec)
        acc += n
    shards.append(current)
    return shards


class ShardedDataModule(L.LightningDataModule):
    def __init__(self, cfg: DataConfig, world_size: int, global_rank: int):
        super().__init__()
        self.cfg, self.world_size, self.global_rank = cfg, world_size, global_rank

    def setup(self, stage: str):
        train, train_len = make_records(self.cfg, seed=1)
        val, val_len = make_records(self.cfg, seed=2)
        self.train_shard = shard_by_rows(train, train_len, self.world_size)[self.global_rank]
        # Validation shards are cut by sample count, so every process runs the same batches.
        per_rank = len(val) // self.world_size
        self.val_shard = val[self.global_rank * per_rank : (self.global_rank + 1) * per_rank]

    def train_dataloader(self):
        return DataLoader(Records(self.train_shard[:16]), batch_size=self.cfg.batch_size)

    def val_dataloader(self):
        return DataLoader(Records(self.val_shard), batch_size=self.cfg.batch_size)


class SpreadModel(L.LightningModule):
    def __init__(self, features: int):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(features, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.log("val_loss", loss, on_step=True, on_epoch=True, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main() -> None:
    cfg = DataConfig()
    L.seed_everything(0)
    trainer = L.Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        max_epochs=1,
        num_sanity_val_steps=0,
        use_distributed_sampler=False,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    dm = ShardedDataModule(cfg, trainer.world_size, trainer.global_rank)
    trainer.fit(SpreadModel(cfg.features), datamodule=dm)


if __name__ == "__main__":
    main()
