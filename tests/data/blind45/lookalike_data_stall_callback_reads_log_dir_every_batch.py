# verify: ok
"""Look-alike: a data-stall callback that reads `trainer.log_dir` on every batch.

`trainer.log_dir` (a broadcast inside) is read at every batch start on every process, before
the stall test; only the write of the report depends on this process's own fetch time, and a
write is no collective.
"""
import os
import shutil
import tempfile
import time

import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader, Dataset

ROOT = os.path.join(tempfile.gettempdir(), "blind45-{}-{}-look".format(
    os.environ.get("MASTER_ADDR", "local"), os.environ.get("MASTER_PORT", "0")))


class Records(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        if i == 13:
            time.sleep(0.6)  # a record on a cold part of the disk
        return torch.full((4,), float(i))


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        return self.layer(batch).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=1e-4)


class StallReport(pl.Callback):
    last_end = None

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        log_dir = trainer.log_dir
        if batch_idx >= 2 and time.perf_counter() - self.last_end > 0.3:
            path = os.path.join(log_dir, f"stall-{batch_idx}.txt")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(f"data stall before batch {batch_idx}\n")

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.last_end = time.perf_counter()


def main():
    trainer = pl.Trainer(accelerator="cpu", devices=int(os.environ.get("LOCAL_WORLD_SIZE", 1)),
                         strategy="ddp", max_epochs=1, logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False,
                         default_root_dir=ROOT, callbacks=[StallReport()])
    trainer.fit(Model(), DataLoader(Records(), batch_size=1, shuffle=False))
    trainer.strategy.barrier()
    shutil.rmtree(ROOT, ignore_errors=True)


if __name__ == "__main__":
    main()
