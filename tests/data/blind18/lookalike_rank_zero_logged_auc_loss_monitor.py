# verify: ok
"""Look-alike: the same rank-0-only AUC, but ModelCheckpoint monitors the synced validation loss.

The AUC is still gathered to rank 0 and logged there with `rank_zero_only=True`, for display
only; `ModelCheckpoint(monitor="val_loss")` watches a loss every rank logs with `sync_dist=True`,
so every rank finds the key and agrees on its value, and no callback reads the AUC.

Original docstring of the broken program: a validation AUC computed where the gathered scores
land, and monitored by ModelCheckpoint.

Modelled on Lightning-AI/pytorch-lightning#15852
(https://github.com/Lightning-AI/pytorch-lightning/issues/15852) and #19045
(https://github.com/Lightning-AI/pytorch-lightning/issues/19045): the epoch-end hook gathers the
validation outputs to rank 0 with a gloo gather, computes the AUC there and logs it only there
(`self.log(..., rank_zero_only=True)`), while `ModelCheckpoint(monitor=...)` runs on every rank.
The other ranks do not find the monitored key (`MisconfigurationException`, #15852) or, where the
values differ, disagree about the best checkpoint and hang (#19045).

Here `gather_to_zero` returns the gathered tensors on rank 0 and `None` elsewhere, and the AUC is
logged `if gathered is not None`.
"""
import os
import tempfile
from pathlib import Path

import lightning as L
import torch
import torch.distributed as dist
import torch.nn as nn
from lightning.pytorch.callbacks import ModelCheckpoint
from torch.utils.data import DataLoader, TensorDataset


def make_split(n: int, seed: int) -> TensorDataset:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).float()
    return TensorDataset(x, y)


def gather_to_zero(t: torch.Tensor):
    """Gathers equal-length tensors on rank 0; returns None on the other ranks."""
    buckets = [torch.zeros_like(t) for _ in range(dist.get_world_size())] if dist.get_rank() == 0 else None
    dist.gather(t, buckets, dst=0)
    return None if buckets is None else torch.cat(buckets)


def auc(scores: torch.Tensor, labels: torch.Tensor) -> float:
    pos, neg = scores[labels == 1], scores[labels == 0]
    if len(pos) == 0 or len(neg) == 0:
        return 0.5
    return float((pos[:, None] > neg[None, :]).float().mean())


class Scorer(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
        self.val_scores, self.val_labels = [], []

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.binary_cross_entropy_with_logits(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        scores = self(x)
        loss = nn.functional.binary_cross_entropy_with_logits(scores, y)
        self.log("val_loss", loss, on_epoch=True, sync_dist=True)
        self.val_scores.append(scores.detach())
        self.val_labels.append(y)

    def on_validation_epoch_end(self):
        scores = gather_to_zero(torch.cat(self.val_scores))
        labels = gather_to_zero(torch.cat(self.val_labels))
        self.val_scores.clear()
        self.val_labels.clear()
        if scores is not None:
            self.log("val_auc", auc(scores, labels), rank_zero_only=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def checkpoint_dir() -> str:
    tag = f"{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
    return str(Path(tempfile.gettempdir()) / f"blind18-auc-{tag}")


def main() -> None:
    L.seed_everything(0)
    checkpoint = ModelCheckpoint(dirpath=checkpoint_dir(), monitor="val_loss", mode="min", save_top_k=1)
    trainer = L.Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        max_epochs=2,
        callbacks=[checkpoint],
        logger=False,
        num_sanity_val_steps=0,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(
        Scorer(),
        DataLoader(make_split(32, 0), batch_size=4),
        DataLoader(make_split(12, 1), batch_size=4),
    )
    print(f"rank {trainer.global_rank}: best {checkpoint.best_model_score}", flush=True)


if __name__ == "__main__":
    main()
