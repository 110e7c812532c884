# verify: ok check=LRS
"""Look-alike: the same per-process validation shards and plateau scheduler, without `sync_dist`.

The monitored value is a torchmetrics `MeanSquaredError` object handed to `self.log`: at the end
of the validation epoch Lightning calls its `compute()`, which gathers the states of every
process, so `val_loss` is the same in every process's `callback_metrics` and the learning rates
stay equal.
"""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import lightning as L
from torchmetrics import MeanSquaredError

LRS = []

torch.manual_seed(0)
TRUE_W = torch.tensor([1.0, -2.0, 0.5, 3.0])
TRAIN_X = torch.randn(64, 4)
TRAIN_Y = TRAIN_X @ TRUE_W
VAL_X = torch.randn(16, 4)
VAL_Y = VAL_X @ TRUE_W
VAL_Y[1::2] += 6.0 * torch.randn(8)  # odd rows carry label noise


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
        self.val_mse = MeanSquaredError()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x).squeeze(-1), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_mse(self.net(x).squeeze(-1), y)
        self.log("val_loss", self.val_mse, on_epoch=True)

    def on_train_epoch_start(self):
        LRS.append(round(self.trainer.optimizers[0].param_groups[0]["lr"], 6))

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.05)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=0, threshold=0.1)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "monitor": "val_loss", "interval": "epoch"}}


def main():
    trainer = L.Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        max_epochs=6,
        num_sanity_val_steps=0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    train = DataLoader(TensorDataset(TRAIN_X, TRAIN_Y), batch_size=8)
    val = DataLoader(TensorDataset(VAL_X, VAL_Y), batch_size=4)
    trainer.fit(Regressor(), train, val)
    print("learning rates per epoch:", LRS)


if __name__ == "__main__":
    main()
