# verify: hang
"""A callback that saves whenever `val_loss` improves, reading a value logged without `sync_dist`.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/pull/6345 ("resolves DDP hangs in
ModelCheckpoint" and warns about metrics logged without reduction: each process's checkpoint
decision followed its own, unreduced value).

`validation_step` logs `val_loss` with the default `sync_dist=False`, so `trainer.callback_metrics`
holds each process's own mean. The validation rows alternate between targets the training pulls
towards (even rows, process 0 through the distributed sampler) and targets of the initial weight
(odd rows, process 1): after the second epoch process 0's loss falls, process 1's rises, and only
process 0 calls `trainer.save_checkpoint`, which ends in a barrier.
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
        self.log("val_loss", (self.net(x) - y).pow(2).mean(), on_epoch=True)

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
            trainer.save_checkpoint(self.path)  # expect: BCL011


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
