# verify: ok
"""Look-alike of fabric_local_val_best_save.py: the improvement is still judged on one shard, but agreed.

Rank 0 alone compares its own shard's validation loss with the best so far (a shortcut some
projects take to save a reduction); the verdict is then broadcast with `fabric.broadcast`, so
every process calls `fabric.save()` (whose barrier needs them all,
Lightning-AI/pytorch-lightning#20027,
https://github.com/Lightning-AI/pytorch-lightning/issues/20027) or none does.
"""
import os
import tempfile
from dataclasses import dataclass

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class TrainConfig:
    features: int = 4
    batch_size: int = 4
    epochs: int = 3
    lr: float = 0.1


def make_data(cfg: TrainConfig):
    gen = torch.Generator().manual_seed(0)
    w = torch.randn(cfg.features, 1, generator=gen)
    x = torch.randn(32, cfg.features, generator=gen)
    train = TensorDataset(x, x @ w)
    vx = torch.randn(8, cfg.features, generator=gen)
    vy = vx @ w
    vy[1::2] = -vy[1::2]  # odd rows, which the sampler hands to rank 1, are mislabelled
    return train, TensorDataset(vx, vy)


class BestCheckpoint:
    def __init__(self, fabric: L.Fabric, directory: str):
        self.fabric = fabric
        self.path = os.path.join(directory, "best.ckpt")
        self.best = float("inf")

    def update(self, val_loss: float, state: dict) -> bool:
        improved = self.fabric.global_rank == 0 and val_loss < self.best
        improved = self.fabric.broadcast(improved, src=0)
        if not improved:
            return False
        self.best = min(self.best, val_loss)
        self.fabric.save(self.path, state)
        return True


def validate(model, loader) -> float:
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += nn.functional.mse_loss(model(x), y, reduction="sum").item()
            count += len(x)
    model.train()
    return total / count


def main():
    cfg = TrainConfig()
    fabric = L.Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    fabric.seed_everything(0)
    train_set, val_set = make_data(cfg)
    model = nn.Linear(cfg.features, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    model, optimizer = fabric.setup(model, optimizer)
    train_loader, val_loader = fabric.setup_dataloaders(
        DataLoader(train_set, batch_size=cfg.batch_size, shuffle=True),
        DataLoader(val_set, batch_size=cfg.batch_size),
    )
    job = f"{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}"
    ckpt = BestCheckpoint(fabric, os.path.join(tempfile.gettempdir(), f"blind6-fabric-best-{job}"))
    for epoch in range(cfg.epochs):
        for x, y in train_loader:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            fabric.backward(loss)
            optimizer.step()
        val_loss = validate(model, val_loader)
        saved = ckpt.update(val_loss, {"model": model, "optimizer": optimizer, "epoch": epoch})
        fabric.print(f"epoch {epoch}: val {val_loss:.4f} saved={saved}")
    fabric.barrier()


if __name__ == "__main__":
    main()
