# verify: ok
"""Hand fix of slow_fetch_trace_dump_reads_log_dir_lightning.

The callback resolves `trainer.log_dir` once, in `on_train_start`, which every process runs;
the stall test then only writes to the directory it already holds. Modelled on
Lightning-AI/pytorch-lightning#6621 (https://github.com/Lightning-AI/pytorch-lightning/pull/6621).
"""
import os
import shutil
import tempfile
import time

import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader, Dataset

ROOT = os.path.join(tempfile.gettempdir(), "blind45-{}-{}-run".format(
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
    log_dir = None

    def on_train_start(self, trainer, pl_module):
        self.log_dir = trainer.log_dir

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if batch_idx >= 2 and time.perf_counter() - self.last_end > 0.3:
            path = os.path.join(self.log_dir, f"stall-{batch_idx}.txt")
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
