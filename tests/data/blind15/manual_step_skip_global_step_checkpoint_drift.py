# verify: hang
"""A manual-optimisation step skipped on unlabelled batches puts Lightning's step counter out of step.

Modelled on Lightning-AI/pytorch-lightning#19740
(https://github.com/Lightning-AI/pytorch-lightning/issues/19740): the processes' step counters go
out of sync (there, one rank finishes its gradient accumulation window earlier), a step-triggered
action that synchronises starts on one rank while the other keeps training, "now they stuck
waiting for each other".

Here `training_step` (manual optimisation) always runs `self.manual_backward(loss)`, so DDP's
gradient all-reduce stays matched, but calls `opt.step()` only for batches that hold a labelled row,
so that AdamW's decay and momentum do not move the weights on an unsupervised batch. Lightning
counts `trainer.global_step` in the optimizer's `step()`. `train_dataloader` keeps the rows in
order (`DistributedSampler(shuffle=False)`: rows `rank::world`), so process 1's second batch (rows
5 and 7) is unlabelled and its counter falls one behind. `ModelCheckpoint(every_n_train_steps=2)` then saves
after process 0's second batch (a broadcast and a barrier inside `trainer.save_checkpoint`) while
process 1 goes on to its third batch's backward.
"""
import os
import tempfile

import torch
import torch.nn as nn
from lightning.pytorch import LightningModule, Trainer
from lightning.pytorch.callbacks import ModelCheckpoint
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

torch.manual_seed(0)
X = torch.randn(16, 3)
Y = X.sum(1, keepdim=True)
LABELLED = torch.ones(16, 1)
LABELLED[[5, 7]] = 0.0  # rows 5 and 7 make process 1's second batch
CKPT_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind15-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}",
    "ckpt",
)


class SemiSupervised(LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        x, y, labelled = batch
        opt = self.optimizers()
        opt.zero_grad()
        err = (self.net(x) - y).pow(2) * labelled
        loss = err.sum() / labelled.sum().clamp(min=1.0)
        self.manual_backward(loss)
        if labelled.any():
            opt.step()  # expect: BCL011
        return loss.detach()

    def train_dataloader(self):
        rows = TensorDataset(X, Y, LABELLED)
        return DataLoader(rows, batch_size=2, sampler=DistributedSampler(rows, shuffle=False))

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=0.01, weight_decay=0.1)


def main():
    trainer = Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        max_epochs=1,
        callbacks=[ModelCheckpoint(dirpath=CKPT_DIR, every_n_train_steps=2, save_top_k=-1)],
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(SemiSupervised())


if __name__ == "__main__":
    main()
