# verify: ok
"""Hand-fixed twin of epoch_summary_callback_metrics_rank_zero: every process reads the metrics.

As talmolab/sleap-nn#476 (https://github.com/talmolab/sleap-nn/pull/476) did, the read of
``trainer.callback_metrics`` (which reduces the ``sync_dist=True`` values) is moved before the
``enabled`` test, so every process computes them at the same point before the barrier; only the
writing is left to the process that writes.
"""
import os
import tempfile

import lightning.pytorch as pl
import torch
from lightning.pytorch.callbacks import Callback
from torch.utils.data import DataLoader, TensorDataset


class CsvEpochLogger(Callback):
    def __init__(self, path):
        self.path = path

    def setup(self, trainer, pl_module, stage):
        self.enabled = trainer.is_global_zero

    def on_validation_epoch_end(self, trainer, pl_module):
        metrics = trainer.callback_metrics
        if self.enabled:
            with open(self.path, "a") as f:
                f.write(f"{trainer.current_epoch}," + ",".join(f"{float(v):.4f}" for v in metrics.values()) + "\n")
        trainer.strategy.barrier()  # nobody reads the CSV before the row is written


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.net(x), y), on_epoch=True, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def loader(n, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=gen)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def main():
    torch.manual_seed(0)
    csv_path = os.path.join(
        tempfile.gettempdir(), f"blind9-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-epochs.csv"
    )
    trainer = pl.Trainer(
        accelerator="cpu", devices=int(os.environ.get("LOCAL_WORLD_SIZE", "2")), strategy="ddp",
        max_epochs=2, logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False, callbacks=[CsvEpochLogger(csv_path)],
    )
    model = Regressor()
    trainer.fit(model, loader(16, 1), loader(8, 2))
    total = trainer.strategy.reduce(torch.tensor(1.0), reduce_op="sum")
    if trainer.is_global_zero:
        print(f"finished on {int(total.item())} processes")


if __name__ == "__main__":
    main()
