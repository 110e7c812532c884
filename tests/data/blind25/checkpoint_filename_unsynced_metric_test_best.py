# verify: error,hang
"""A checkpoint file name built from a validation loss that each process logs for itself.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/6716 ("In multi-gpus,
trainer.test Error when ModelCheckpoint specifies the filename", with
`filename="{epoch}-{valid_loss:.4f}"`). `validation_step` logs `val_loss` without `sync_dist`, so
each process's epoch value is the mean of its own validation shard (the sampler deals the noisy
rows to process 1). `ModelCheckpoint` agrees on *whether* to save (it reduces that decision) but
formats the file name from the local value: process 0 writes its file, process 1 remembers a
`best_model_path` that was never written. `trainer.test(ckpt_path="best")` then fails on process
1 with a missing checkpoint while process 0 loads its own and waits for it.
"""
import os
import shutil
import tempfile
from pathlib import Path

import torch
from lightning.pytorch import LightningModule, Trainer
from lightning.pytorch.callbacks import ModelCheckpoint
from torch.utils.data import DataLoader, TensorDataset

CKPT_DIR = Path(tempfile.gettempdir()) / (
    f"blind25-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-ckpt"
)


def rows(n: int, seed: int, noisy_odd: bool = False) -> TensorDataset:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    y = x @ torch.tensor([[1.0], [0.5], [-1.0]])
    if noisy_odd:
        y[1::2] += 2.0 * torch.randn(n // 2, 1, generator=g)
    return TensorDataset(x, y)


class Regressor(LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.layer(x), y))  # expect: BCL011

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_loss", torch.nn.functional.mse_loss(self.layer(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main() -> None:
    torch.manual_seed(0)
    checkpoint = ModelCheckpoint(
        dirpath=CKPT_DIR, filename="{epoch}-{val_loss:.3f}", monitor="val_loss", save_top_k=1
    )
    trainer = Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=2, callbacks=[checkpoint],
        logger=False, enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0,
    )
    model = Regressor()
    trainer.fit(
        model,
        DataLoader(rows(32, 1), batch_size=4),
        DataLoader(rows(16, 2, noisy_odd=True), batch_size=4),
    )
    trainer.test(model, DataLoader(rows(8, 3), batch_size=4), ckpt_path="best")
    if trainer.is_global_zero:
        shutil.rmtree(CKPT_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
