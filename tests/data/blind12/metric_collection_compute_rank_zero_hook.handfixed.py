# verify: ok
"""Hand-fixed: every process computes the MetricCollection at the end of validation; rank 0 prints.

Modelled on https://github.com/Lightning-AI/torchmetrics/issues/2684 (a torchmetrics metric
computed in a LightningModule's `on_validation_end` decorated with `rank_zero_only` hangs on more
than one device). `MetricCollection.compute()` syncs every member's states across processes
(`sync_on_compute=True` is the default), so process 1, which skips the hook, never joins the
gathers that process 0 starts.
"""
import torch
import lightning.pytorch as pl
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics import MetricCollection
from torchmetrics.regression import MeanAbsoluteError, MeanSquaredError


def make_loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x.sum(dim=1)), batch_size=4)


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)
        self.val_metrics = MetricCollection(
            {"mae": MeanAbsoluteError(), "mse": MeanSquaredError()}, prefix="val_"
        )

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x).squeeze(-1), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_metrics.update(self.net(x).squeeze(-1), y)

    def on_validation_epoch_end(self):
        scores = self.val_metrics.compute()
        self.val_metrics.reset()
        if self.trainer.is_global_zero:
            print("epoch", self.current_epoch, {k: round(v.item(), 4) for k, v in scores.items()})

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    trainer = pl.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=2, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
    )
    trainer.fit(Regressor(), make_loader(16, 0), make_loader(8, 1))


if __name__ == "__main__":
    main()
