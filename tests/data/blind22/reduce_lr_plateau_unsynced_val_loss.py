# verify: divergent check=LRS
"""A `ReduceLROnPlateau` scheduler that monitors a validation loss each process logged for itself.

Modelled on https://github.com/rmchurch/disruptcnn/issues/3 (in distributed runs the plateau
scheduler was stepped with the process's own loss, not the globally averaged one, so it did not
behave as the global loss said it should).

The validation rows alternate clean and noisy targets; Lightning's validation sampler deals them
round-robin, so process 0 validates on the clean rows and process 1 on the noisy ones. The loss is
logged without `sync_dist`, so `val_loss` in each process's `callback_metrics` is its own shard's,
and the scheduler Lightning steps with it reduces the learning rate on process 1 only.
"""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import lightning as L

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

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x).squeeze(-1), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x).squeeze(-1), y)
        self.log("val_loss", loss, on_epoch=True)  # expect: BCL011

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
