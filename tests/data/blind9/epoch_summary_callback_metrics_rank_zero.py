# verify: hang
"""A CSV callback reads ``trainer.callback_metrics`` only where it writes, then waits at a barrier.

Modelled on talmolab/sleap-nn#476 (https://github.com/talmolab/sleap-nn/pull/476: "accessing
``trainer.callback_metrics`` inside ``if trainer.is_global_zero:`` causes a collective mismatch.
The property triggers an implicit all_reduce ... when metrics are logged with sync_dist=True.
Since only rank 0 enters the guard, rank 1 hits a barrier instead") and
Lightning-AI/pytorch-lightning#21264
(https://github.com/Lightning-AI/pytorch-lightning/issues/21264: the TQDM bar, enabled on rank
zero only, reads the metrics). ``CsvEpochLogger`` decides in ``setup()`` whether it writes
(``self.enabled = trainer.is_global_zero``, as a progress bar does); in
``on_validation_epoch_end`` the writing process reads ``trainer.callback_metrics`` and appends a
row, and every process then meets at ``trainer.strategy.barrier()`` so that nobody reads the file
before the row is in. The read computes the ``sync_dist=True`` validation loss (an all-reduce)
on rank 0 only, against rank 1's barrier; rank 1 computes it after the hook, in Lightning's own
epoch end.
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
        if self.enabled:
            metrics = trainer.callback_metrics  # expect: BCL011
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
