# verify: ok
"""Hand-fixed `manual_step_skip_global_step_checkpoint_drift`: the processes agree on skipping the step.

Whether the batch holds a labelled row goes through `trainer.strategy.reduce_boolean_decision(...,
all=False)`: every process steps when any process has a labelled row (the gradients are averaged
over all of them anyway) and skips only when none has. The processes' `global_step` counters stay
equal, so `ModelCheckpoint(every_n_train_steps=2)` saves at the same batch everywhere.
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
        if self.trainer.strategy.reduce_boolean_decision(bool(labelled.any()), all=False):
            opt.step()
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
