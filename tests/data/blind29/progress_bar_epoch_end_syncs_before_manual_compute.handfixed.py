# verify: ok
"""A training loss logged with `sync_dist` at epoch level, and a torchmetrics metric computed by hand.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/19604 (deadlock when a metric
updated in `training_step` is computed manually in `on_train_epoch_end` while the training loss is
logged with `on_epoch=True`). Lightning's progress bar is enabled on global rank 0 only; at the end
of the epoch its `on_train_epoch_end` hook (callbacks run before the module's hook) refreshes the
postfix, which reduces the epoch value of `train_loss` (`sync_dist=True`: an all-reduce). The other
process has a disabled bar, goes straight to the module's `on_train_epoch_end` and enters the
metric's `compute()` gather, so the two processes wait in different collectives.
"""
from datetime import timedelta

import lightning.pytorch as pl
import torch
import torch.nn.functional as F
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics import MeanSquaredError


def rows(n=32):
    g = torch.Generator().manual_seed(4)
    x = torch.randn(n, 4, generator=g)
    return TensorDataset(x, x.sum(1, keepdim=True))


class Probe(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 1)
        self.train_mse = MeanSquaredError()

    def training_step(self, batch, batch_idx):
        x, y = batch
        pred = self.lin(x)
        loss = F.mse_loss(pred, y)
        self.train_mse.update(pred.detach(), y)
        self.log("train_loss", loss, on_step=False, on_epoch=True, sync_dist=True)
        # The metric object is logged rather than computed by hand: Lightning computes (and
        # syncs) it with train_loss, in the same order on every process, and resets it.
        self.log("train_mse", self.train_mse, on_step=False, on_epoch=True)
        return loss

    def on_train_epoch_end(self):
        mse = self.trainer.callback_metrics["train_mse"]
        self.print(f"epoch {self.current_epoch}: train mse {mse.item():.4f}")

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    torch.manual_seed(0)
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=2,
        strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=20)),
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_model_summary=False,
    )
    trainer.fit(Probe(), DataLoader(rows(), batch_size=4))


if __name__ == "__main__":
    main()
