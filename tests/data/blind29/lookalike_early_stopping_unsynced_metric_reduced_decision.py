# verify: ok
"""EarlyStopping watches a validation loss each process logs without `sync_dist`.

Resembles checkpoint_monitor_key_absent_on_unlabelled_shard: each process logs its own
`val_loss` (no `sync_dist`), and the unshuffled DistributedSampler gives the two processes
different validation rows, so the values and the local stop decisions differ. But Lightning's
`EarlyStopping` hands its decision to `trainer.strategy.reduce_boolean_decision(..., all=False)`
on every process: once one process wants to stop, all stop after the same epoch, and the key is
logged on every process (every batch is labelled).
"""
from datetime import timedelta

import lightning.pytorch as pl
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import EarlyStopping
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def rows(n, seed, noise):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = x.sum(1, keepdim=True)
    y[1::2] += noise * torch.randn(n // 2, 1, generator=g)  # odd rows: noisy sensor
    return TensorDataset(x, y)


class Probe(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.lin(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.mse_loss(self.lin(x), y), on_epoch=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    torch.manual_seed(0)
    stopper = EarlyStopping(monitor="val_loss", patience=0, min_delta=0.05)
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=2,
        strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=20)),
        max_epochs=6,
        callbacks=[stopper],
        num_sanity_val_steps=0,
        use_distributed_sampler=False,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )

    def loader(ds):
        sampler = DistributedSampler(ds, trainer.world_size, trainer.global_rank, shuffle=False)
        return DataLoader(ds, batch_size=4, sampler=sampler)

    model = Probe()
    trainer.fit(model, loader(rows(32, 0, 0.0)), loader(rows(16, 1, 3.0)))
    print(f"rank {trainer.global_rank}: stopped after epoch {trainer.current_epoch}")


if __name__ == "__main__":
    main()
