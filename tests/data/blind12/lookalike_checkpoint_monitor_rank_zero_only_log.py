# verify: ok
"""Look-alike: a monitored validation loss logged with `rank_zero_only=True`, so each process's
ModelCheckpoint sees its own value; Lightning 2.6.6's ModelCheckpoint still agrees.

Resembles https://github.com/Lightning-AI/pytorch-lightning/issues/19045 (the monitor values
diverge across ranks and the checkpoint callback hung in Lightning 2.1). The validation rows
alternate between two instruments; the distributed sampler deals the even rows to process 0 and
the odd rows, whose sign convention is reversed, to process 1, so process 0's loss falls and
process 1's rises. `ModelCheckpoint.check_monitor_top_k` now passes its local decision through
`trainer.strategy.reduce_boolean_decision`, so every process saves (or skips) together.
"""
import os
import tempfile

import torch
import lightning.pytorch as pl
from lightning.pytorch.callbacks import ModelCheckpoint
from torch.utils.data import DataLoader, TensorDataset

CKPT_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind12-monitor-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}",
)


def train_rows(n=32):
    x = torch.randn(n, 4, generator=torch.Generator().manual_seed(0))
    return TensorDataset(x, x.sum(dim=1))


def val_rows(n=16):
    x = torch.randn(n, 4, generator=torch.Generator().manual_seed(1))
    sign = torch.tensor([1.0 if i % 2 == 0 else -1.0 for i in range(n)])  # instrument B: reversed
    return TensorDataset(x, sign * x.sum(dim=1))


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x).squeeze(-1), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x).squeeze(-1), y)
        self.log("val_loss", loss, on_epoch=True, rank_zero_only=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    checkpoint = ModelCheckpoint(dirpath=CKPT_DIR, monitor="val_loss", mode="min", save_top_k=1)
    trainer = pl.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=4, logger=False,
        callbacks=[checkpoint], enable_progress_bar=False, enable_model_summary=False,
    )
    trainer.fit(Regressor(), DataLoader(train_rows(), batch_size=4), DataLoader(val_rows(), batch_size=4))


if __name__ == "__main__":
    main()
