# verify: ok
"""Hand-fixed `debug_mode_on_watched_rank_extra_shape_gather`: debug mode is on for every process or none.

Accelerate's debug mode adds collectives (a `gather_object` of shapes before each operation), so
the script treats a non-empty `DEBUG_RANKS` as a request for the whole job and sets
`ACCELERATE_DEBUG_MODE` on every process: every reduce then runs the same shape check everywhere.
"""
import os

import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

DEBUG_RANKS = [r for r in os.environ.get("DEBUG_RANKS", "0").split(",") if r]
if DEBUG_RANKS:
    os.environ["ACCELERATE_DEBUG_MODE"] = "1"

torch.manual_seed(0)
X = torch.randn(16, 5)
Y = (X @ torch.arange(5.0)).unsqueeze(1)


def main():
    accelerator = Accelerator(cpu=True)
    model = nn.Linear(5, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02)
    loader = DataLoader(TensorDataset(X, Y), batch_size=4)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    history = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = (model(x) - y).pow(2).mean()
        accelerator.backward(loss)
        optimizer.step()
        mean_loss = accelerator.reduce(loss.detach(), reduction="mean")
        history.append(float(mean_loss))
    if accelerator.is_main_process:
        print("losses", [round(v, 3) for v in history])
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
