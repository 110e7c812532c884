# verify: ok
"""Hand-fixed: `val_loss` is logged with `sync_dist=True`, so the callback compares the same mean everywhere.

The broken program is `best_callback_unsynced_val_loss_save.py` (modelled on https://github.com/Lightning-AI/pytorch-lightning/pull/6345).
"""
import os
import tempfile
from pathlib import Path

import torch
import torch.nn as nn
from lightning.pytorch import Callback, LightningModule, Trainer
from torch.utils.data import DataLoader, TensorDataset

XS = torch.linspace(0.5, 2.0, 8).unsqueeze(1)
TRAIN = TensorDataset(XS, 2.0 * XS)
# Even rows follow the training target (2x), odd rows the initial weight (0x).
VAL = TensorDataset(XS, torch.where(torch.arange(8).unsqueeze(1) % 2 == 0, 2.0 * XS, 0.0 * XS))


class Line(LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(1, 1, bias=False)
        nn.init.zeros_(self.net.weight)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return (self.net(x) - y).pow(2).mean()

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", (self.net(x) - y).pow(2).mean(), on_epoch=True, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


class SaveBest(Callback):
    def __init__(self, path):
        self.path = path
        self.best = float("inf")

    def on_validation_epoch_end(self, trainer, pl_module):
        current = float(trainer.callback_metrics["val_loss"])
        if current < self.best:
            self.best = current
            trainer.save_checkpoint(self.path)


def main():
    out = Path(tempfile.gettempdir()) / f"blind14-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
    torch.manual_seed(0)
    trainer = Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=3, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
        num_sanity_val_steps=0, callbacks=[SaveBest(out / "best.ckpt")],
    )
    trainer.fit(Line(), DataLoader(TRAIN, batch_size=2), DataLoader(VAL, batch_size=2))
    print(f"rank {trainer.global_rank}: best {trainer.callbacks[0].best:.4f}")


if __name__ == "__main__":
    main()
