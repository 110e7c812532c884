# verify: hang
"""Accelerate's debug mode switched on for the watched rank only: its shape checks are collectives.

Modelled on pytorch/pytorch#129672 (https://github.com/pytorch/pytorch/issues/129672): setting
`TORCH_DISTRIBUTED_DEBUG=DETAIL` (with `TORCH_CPP_LOG_LEVEL=INFO`) "on any one of the machines"
makes the job hang, because the debug level adds communication on the processes that read it and
not on the others.

Here the script turns on `ACCELERATE_DEBUG_MODE` for the ranks listed in `DEBUG_RANKS` (by default
the main rank, whose log is the one people read) before it creates the `Accelerator`. Accelerate
reads the variable once per process, into `PartialState().debug`; in debug mode every
`accelerate.utils.reduce`/`gather`/`broadcast` first checks the shapes with `gather_object`, an
all-gather of its own. From the first logged loss on, process 0 runs that extra all-gather before
its all-reduce while process 1 runs the all-reduce alone.
"""
import os

import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

DEBUG_RANKS = os.environ.get("DEBUG_RANKS", "0").split(",")
if os.environ.get("RANK", "0") in DEBUG_RANKS:
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
        mean_loss = accelerator.reduce(loss.detach(), reduction="mean")  # expect: BCL011
        history.append(float(mean_loss))
    if accelerator.is_main_process:
        print("losses", [round(v, 3) for v in history])
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
