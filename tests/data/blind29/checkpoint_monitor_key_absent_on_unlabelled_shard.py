# verify: error,hang
"""Validation accuracy is logged only for batches that carry labels; ModelCheckpoint monitors it.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/5865 (DDP training stuck after
validation once `ModelCheckpoint` monitored a value the processes did not agree on). Here the
validation clips at odd positions are still unannotated (-100), and the unshuffled
DistributedSampler hands all of them to process 1. Its `validation_step` never reaches
`self.log("val_acc", ...)`, so at the end of validation `ModelCheckpoint(monitor="val_acc")` finds
no such key on process 1 and raises, while process 0 goes on into the checkpoint's agreement on
whether to save.
"""
import os
import shutil
import tempfile
from datetime import timedelta

import lightning.pytorch as pl
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import ModelCheckpoint
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

IGNORE = -100
CKPT_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind29-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-ckpt",
)


def clips(n, unlabelled_odd):
    g = torch.Generator().manual_seed(n)
    x = torch.randn(n, 6, generator=g)
    y = torch.randint(0, 3, (n,), generator=g)
    if unlabelled_odd:
        y[1::2] = IGNORE  # annotation pending
    return TensorDataset(x, y)


class ClipClassifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(6, 3)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.head(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        labelled = y != IGNORE
        if labelled.any():
            acc = (self.head(x[labelled]).argmax(-1) == y[labelled]).float().mean()
            self.log("val_acc", acc, on_epoch=True)  # expect: BCL011

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loader(rows, trainer):
    sampler = DistributedSampler(rows, trainer.world_size, trainer.global_rank, shuffle=False)
    return DataLoader(rows, batch_size=2, sampler=sampler)


def main():
    torch.manual_seed(0)
    checkpoint = ModelCheckpoint(dirpath=CKPT_DIR, monitor="val_acc", mode="max", save_top_k=1)
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=2,
        strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=20)),
        max_epochs=2,
        callbacks=[checkpoint],
        num_sanity_val_steps=0,
        use_distributed_sampler=False,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    model = ClipClassifier()
    trainer.fit(model, loader(clips(16, False), trainer), loader(clips(8, True), trainer))
    print(f"rank {trainer.global_rank}: best {checkpoint.best_model_score}")
    trainer.strategy.barrier()
    if trainer.is_global_zero:
        shutil.rmtree(CKPT_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
