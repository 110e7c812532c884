# verify: ok
"""A wall-clock budget callback stops training on its own process's clock.

Modelled on https://github.com/QMCPACK/qmcpack/pull/460 (a run-time limit checked on every
process: processes that make different decisions about continuing the loop hang; the fix
broadcasts the decision). Here `WallClockBudget.on_train_batch_end` sets `trainer.should_stop`
once 1.2 s have passed since `on_train_start`. Another callback renders a preview of every
flagged row after each batch (0.15 s a row), and the unshuffled DistributedSampler puts every
flagged row on process 1, so its clock reads about 0.3 s later at each check: it passes the budget
one step before process 0, stops, and leaves process 0 in the next step's gradient all-reduce.
"""
import time
from datetime import timedelta

import lightning.pytorch as pl
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def rows(n=48):
    g = torch.Generator().manual_seed(5)
    x = torch.randn(n, 4, generator=g)
    flagged = torch.arange(n) % 2 == 1  # rows a reviewer asked to see
    return TensorDataset(x, x.sum(1, keepdim=True), flagged)


class RenderPreviews(Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        for _ in range(int(batch[2].sum())):
            time.sleep(0.15)  # stands in for encoding a preview image


class WallClockBudget(Callback):
    def __init__(self, seconds):
        self.seconds = seconds
        self.start = None

    def on_train_start(self, trainer, pl_module):
        self.start = time.monotonic()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        over = time.monotonic() - self.start > self.seconds
        # One clock decides for every process: process 0's answer is broadcast.
        if trainer.strategy.broadcast(over, src=0):
            trainer.should_stop = True


class Probe(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y, _ = batch
        return F.mse_loss(self.lin(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    torch.manual_seed(0)
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=2,
        strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=20)),
        max_epochs=2,
        callbacks=[RenderPreviews(), WallClockBudget(1.2)],
        use_distributed_sampler=False,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    data = rows()
    sampler = DistributedSampler(data, trainer.world_size, trainer.global_rank, shuffle=False)
    trainer.fit(Probe(), DataLoader(data, batch_size=2, sampler=sampler))
    print(f"rank {trainer.global_rank}: stopped at step {trainer.global_step}")


if __name__ == "__main__":
    main()
