# verify: ok
"""Hand fix of data_stall_callback_local_clock_save_checkpoint.py: the processes agree on the stall.

Every process calls `trainer.strategy.reduce_boolean_decision(stalled, all=False)` at the start of
every batch, so all of them save when any one of them has stalled, and `save_checkpoint` is
reached by every process together.

Original description: a Lightning callback that checkpoints when reads get slow, timed by each
process's own clock.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/6286: a time-based
checkpoint trigger needs the ranks to agree on the decision, "in case their timers are slightly
off"; without it one process saves while the others train on.

The dataset times its own reads (`io_seconds`, this process's clock); `StallCheckpoint` calls
`trainer.save_checkpoint` at the start of a batch once that time exceeds a budget (slow storage
is taken as a sign of a coming preemption). The odd rows live on slow storage (`__getitem__`
sleeps); the module's unshuffled `DistributedSampler` gives process 1 every odd row: only its reads
cross the budget, so only process 1 enters `save_checkpoint` (which ends in a barrier) while
process 0 is in its next backward.
"""
import os
import shutil
import tempfile
import time

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, DistributedSampler

BASE = os.path.join(
    tempfile.gettempdir(),
    f"blind27-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-stall",
)


class Recordings(Dataset):
    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(32, 6, generator=g)
        self.y = (self.x[:, 0] > 0).float()
        self.io_seconds = 0.0

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        start = time.monotonic()
        if i % 2 == 1:
            time.sleep(0.15)  # archived recordings: slow storage
        self.io_seconds += time.monotonic() - start
        return self.x[i], self.y[i]


class StallCheckpoint(L.Callback):
    def __init__(self, path, budget_s):
        self.path, self.budget_s = path, budget_s
        self.saved = False

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        stalled = trainer.train_dataloader.dataset.io_seconds > self.budget_s
        stalled = trainer.strategy.reduce_boolean_decision(stalled, all=False)
        if stalled and not self.saved:
            trainer.save_checkpoint(self.path)
            self.saved = True


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(6, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.binary_cross_entropy_with_logits(self.net(x).squeeze(1), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def train_dataloader(self):
        ds = Recordings()
        sampler = DistributedSampler(
            ds, num_replicas=self.trainer.world_size, rank=self.trainer.global_rank, shuffle=False
        )
        return DataLoader(ds, batch_size=2, sampler=sampler)


def main():
    trainer = L.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=1,
        callbacks=[StallCheckpoint(os.path.join(BASE, "stall.ckpt"), budget_s=0.8)],
        logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, use_distributed_sampler=False,
    )
    trainer.fit(Classifier())
    trainer.strategy.barrier()
    if trainer.is_global_zero:
        shutil.rmtree(BASE, ignore_errors=True)


if __name__ == "__main__":
    main()
