# verify: ok
"""Look-alike: the same per-process timestamped run directory, handed to Lightning's ModelCheckpoint.

The same `RunConfig` as timestamped_output_dir_best_reload: each process names its run directory
after its own clock, to the microsecond, so the two processes hold different `output_dir`s. But
the checkpoints go through Lightning's Trainer: `ModelCheckpoint(dirpath=cfg.output_dir, ...)`
broadcasts its directory from rank 0 in `setup()` (Lightning-AI/pytorch-lightning#6978), so the
best checkpoint's path is rank 0's on every process, and `trainer.test(..., ckpt_path="best")`
reloads it from there. Only the per-process `config.json` lands in two directories.
"""
import json
import os
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Optional

import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def jobs_root():
    name = f"blind17-runs-pl-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}"
    return Path(tempfile.gettempdir()) / name


@dataclass
class RunConfig:
    name: str = "tabular-mlp"
    epochs: int = 3
    lr: float = 0.05
    batch_size: int = 4
    output_dir: Optional[Path] = None

    def __post_init__(self):
        if self.output_dir is None:
            stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")
            self.output_dir = jobs_root() / f"{stamp}_{self.name}"


def make_split(seed, n):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 6, generator=g)
    y = x @ torch.linspace(-1, 1, 6).unsqueeze(1) + 0.1 * torch.randn(n, 1, generator=g)
    return TensorDataset(x, y)


class Regressor(L.LightningModule):
    def __init__(self, lr):
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_loss", nn.functional.mse_loss(self.net(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


def main():
    cfg = RunConfig()
    cfg.output_dir.mkdir(parents=True, exist_ok=True)
    (cfg.output_dir / "config.json").write_text(json.dumps({"name": cfg.name, "epochs": cfg.epochs, "lr": cfg.lr}))

    L.seed_everything(0)
    best = ModelCheckpoint(dirpath=cfg.output_dir, filename="best", monitor="val_loss", mode="min", save_top_k=1)
    trainer = L.Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        max_epochs=cfg.epochs,
        num_sanity_val_steps=0,
        logger=False,
        callbacks=[best],
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=str(cfg.output_dir),
    )
    model = Regressor(cfg.lr)
    trainer.fit(
        model,
        train_dataloaders=DataLoader(make_split(1, 32), batch_size=cfg.batch_size),
        val_dataloaders=DataLoader(make_split(2, 16), batch_size=cfg.batch_size),
    )
    trainer.test(model, dataloaders=DataLoader(make_split(3, 16), batch_size=cfg.batch_size), ckpt_path="best")


if __name__ == "__main__":
    main()
