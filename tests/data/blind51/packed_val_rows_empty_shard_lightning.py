# verify: hang,error
"""Validation documents packed per process into full rows: one process packs none.

Modelled on https://github.com/NVIDIA-NeMo/Megatron-Bridge/issues/1477 (training hangs at the
first validation: a small validation split, packed into longer sequences, left some ranks with
no samples, and the ranks with samples blocked). Each process packs its own share of the
validation documents into rows of 16 tokens as it streams them (an `IterableDataset`, so
Lightning cannot check its length) and drops the incomplete last row; process 1's
documents do not fill one row, so it runs no `validation_step` while process 0 logs the
validation loss with `sync_dist=True` (an all-reduce).
"""
import os
import shutil
import tempfile

import lightning as L
import torch
from torch.utils.data import DataLoader, IterableDataset

SEQ = 16
TRAIN = torch.randn(8, SEQ, generator=torch.Generator().manual_seed(0))
VAL_DOC_LENGTHS = [12, 3, 9, 4, 7, 2]


class PackedRows(IterableDataset):
    """Streams documents into rows of `seq` tokens; the incomplete last row is dropped."""

    def __init__(self, lengths, seq):
        self.lengths, self.seq = lengths, seq

    def __iter__(self):
        buf = []
        for n in self.lengths:
            buf += [float(n) / self.seq] * n
            while len(buf) >= self.seq:
                yield torch.tensor(buf[:self.seq])
                buf = buf[self.seq:]


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(SEQ, 1)

    def training_step(self, batch, batch_idx):
        return self.layer(batch).pow(2).mean()

    def validation_step(self, batch, batch_idx):
        loss = self.layer(batch).pow(2).mean()
        self.log("val_loss", loss, sync_dist=True)  # expect: BCL011

    def train_dataloader(self):
        shard = TRAIN[self.global_rank::self.trainer.world_size]
        return DataLoader(shard, batch_size=2)

    def val_dataloader(self):
        docs = VAL_DOC_LENGTHS[self.global_rank::self.trainer.world_size]
        return DataLoader(PackedRows(docs, SEQ), batch_size=1)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


def main():
    root = os.path.join(tempfile.gettempdir(), "blind51-%s-%s-val" % (
        os.environ.get("MASTER_ADDR", "local"), os.environ.get("MASTER_PORT", "0")))
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=1,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, use_distributed_sampler=False,
                        num_sanity_val_steps=0, default_root_dir=root)
    trainer.fit(Model())
    print("val_loss:", trainer.callback_metrics.get("val_loss"))
    if trainer.is_global_zero:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
