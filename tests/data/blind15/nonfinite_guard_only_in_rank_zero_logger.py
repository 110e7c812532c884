# verify: error
"""A validation summary checked for non-finite values only inside the rank-zero logger.

Modelled on NVIDIA/nvalchemi-toolkit#109
(https://github.com/NVIDIA/nvalchemi-toolkit/pull/109): the training example's `_log_validation`
returns at once on every process but global rank 0 (`if ctx.global_rank != 0 ...: return`), so
`_require_finite`, which raises on a non-finite validation metric, runs on rank 0 only; the review
points out that the other ranks then go back to training and block in the next gradient all-reduce
for a rank that has left.

Here the validation summary (energy and force errors, sums and counts all-reduced with
`fabric.all_reduce`) is the same on both processes. The validation split holds no force labels, so
`force_mae` is 0/0 = nan. `ValidationLogger.log` returns on process 1 before its finiteness check;
process 0 raises, and process 1 enters the next epoch's backward (DDP's gradient all-reduce) alone.
"""
import math

import torch
import torch.nn as nn
from lightning.fabric import Fabric
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
TRAIN_X = torch.randn(16, 4)
TRAIN_E = TRAIN_X.sum(1, keepdim=True)
TRAIN_F = -TRAIN_X[:, :3]
TRAIN_MASK = torch.ones(16, 1)
VAL_X = torch.randn(8, 4)
VAL_E = VAL_X.sum(1, keepdim=True)
VAL_F = torch.zeros(8, 3)
VAL_MASK = torch.zeros(8, 1)  # single-point energies: no force labels in this split


class Potential(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 4))

    def forward(self, x):
        out = self.net(x)
        return out[:, :1], out[:, 1:]


class ValidationLogger:
    def __init__(self, fabric):
        self.fabric = fabric
        self.history = []

    def log(self, epoch, summary):
        if self.fabric.global_rank != 0:
            return
        self._require_finite(summary)
        self.history.append((epoch, summary))
        self.fabric.print(f"epoch {epoch}: " + ", ".join(f"{k}={v:.4f}" for k, v in summary.items()))

    def _require_finite(self, summary):
        bad = [name for name, value in summary.items() if not math.isfinite(value)]
        if bad:
            raise RuntimeError(f"non-finite validation metrics: {bad}")


def validate(fabric, model, loader):
    sums = torch.zeros(4)
    model.eval()
    with torch.no_grad():
        for x, e, f, mask in loader:
            pe, pf = model(x)
            sums[0] += (pe - e).abs().sum()
            sums[1] += e.numel()
            sums[2] += ((pf - f).abs() * mask).sum()
            sums[3] += mask.sum() * 3
    sums = fabric.all_reduce(sums, reduce_op="sum")
    return {"energy_mae": (sums[0] / sums[1]).item(), "force_mae": (sums[2] / sums[3]).item()}


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    model = Potential()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model, optimizer = fabric.setup(model, optimizer)
    train_loader = fabric.setup_dataloaders(
        DataLoader(TensorDataset(TRAIN_X, TRAIN_E, TRAIN_F, TRAIN_MASK), batch_size=4)
    )
    val_loader = fabric.setup_dataloaders(DataLoader(TensorDataset(VAL_X, VAL_E, VAL_F, VAL_MASK), batch_size=4))
    logger = ValidationLogger(fabric)

    for epoch in range(3):
        model.train()
        for x, e, f, mask in train_loader:
            optimizer.zero_grad()
            pe, pf = model(x)
            loss = (pe - e).pow(2).mean() + ((pf - f).pow(2) * mask).sum() / mask.sum().clamp(min=1)
            fabric.backward(loss)  # expect: BCL011
            optimizer.step()
        summary = validate(fabric, model, val_loader)
        logger.log(epoch, summary)

    fabric.barrier()


if __name__ == "__main__":
    main()
