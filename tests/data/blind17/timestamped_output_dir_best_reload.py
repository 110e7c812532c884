# verify: error
"""Output directory named after each process's own clock; the best checkpoint is reloaded from it.

Modelled on TensorAuto/OpenTau#396 (https://github.com/TensorAuto/OpenTau/pull/396), "broadcast
output_dir so all ranks share one checkpoint tree": the config's default `output_dir` came from
"a per-process wall-clock timestamp", computed independently in every rank, so ranks could
"disagree on `output_dir`" and write into sibling directories; and on
Lightning-AI/pytorch-lightning#5512 (https://github.com/Lightning-AI/pytorch-lightning/issues/5512),
"FileNotFoundError for best checkpoint when using DDP with Hydra", where a timestamped run
directory differed between the processes and the best checkpoint was looked for where it was
never written.

`RunConfig.__post_init__` names the run directory `<date>-<time>-<microseconds>_<name>` (the
microseconds so that two runs launched in the same second do not share a directory). Lightning
Fabric trains on both processes; after each epoch the validation loss is all-reduced and, when it
improves, `fabric.save(cfg.output_dir / "best.ckpt", state)` writes the checkpoint (Fabric writes
on rank 0 only). After the last epoch every process reloads the best weights for the test pass
with `fabric.load(...)`.

Where the ranks part ways: each process builds its own `RunConfig`, a few hundred microseconds
apart, so the two `output_dir`s differ. Rank 0 wrote `best.ckpt` into its own directory; in
process 1's directory there is none, so process 1 raises `FileNotFoundError` inside
`fabric.load` while rank 0, having read its file, waits in the barrier at the end of that call.
"""
import json
import os
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Optional

import torch
from lightning.fabric import Fabric
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def jobs_root():
    name = f"blind17-runs-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}"
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


def evaluate(fabric, model, loader):
    model.eval()
    totals = torch.zeros(2)
    with torch.no_grad():
        for x, y in loader:
            totals += torch.tensor([nn.functional.mse_loss(model(x), y, reduction="sum").item(), len(y)])
    model.train()
    totals = fabric.all_reduce(totals, reduce_op="sum")
    return float(totals[0] / totals[1])


def main():
    cfg = RunConfig()
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    cfg.output_dir.mkdir(parents=True, exist_ok=True)
    (cfg.output_dir / "config.json").write_text(json.dumps({"name": cfg.name, "epochs": cfg.epochs, "lr": cfg.lr}))

    fabric.seed_everything(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    model, opt = fabric.setup(model, opt)
    train_loader, val_loader, test_loader = fabric.setup_dataloaders(
        DataLoader(make_split(1, 32), batch_size=cfg.batch_size),
        DataLoader(make_split(2, 16), batch_size=cfg.batch_size),
        DataLoader(make_split(3, 16), batch_size=cfg.batch_size),
    )
    state = {"model": model, "optimizer": opt, "epoch": 0}

    best = float("inf")
    for epoch in range(cfg.epochs):
        for x, y in train_loader:
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            fabric.backward(loss)
            opt.step()
        val_loss = evaluate(fabric, model, val_loader)
        fabric.print(f"epoch {epoch}: val_loss {val_loss:.4f}")
        if val_loss < best:
            best = val_loss
            state["epoch"] = epoch
            fabric.save(cfg.output_dir / "best.ckpt", state)

    fabric.load(cfg.output_dir / "best.ckpt", state)  # expect: BCL011
    fabric.print(f"best epoch {state['epoch']}: test_loss {evaluate(fabric, model, test_loader):.4f}")


if __name__ == "__main__":
    main()
