# verify: error
"""A run directory named from each process's own clock, saved with `save_state` and resumed with `load_state`.

Modelled on https://github.com/tier4/Diffusion-Planner/pull/429 (the output root got a
`datetime.now()` suffix taken independently on every rank; ranks either side of a boundary built
different roots and a later read failed with FileNotFoundError). Here the stamp goes to the
microsecond, so the two processes always disagree: `accelerator.save_state` writes the model and
optimizer from the main process into its directory (the other directory only gets that process's
RNG state), and `accelerator.load_state` on process 1 finds no weights in its own.
"""
import datetime
import os
import shutil
import tempfile

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from accelerate import Accelerator

BASE = os.path.join(tempfile.gettempdir(), f"blind22-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-accel-runs")


def run_dir_name():
    return "run-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S-%f")


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    run_dir = os.path.join(BASE, run_dir_name())  # expect: BCL011
    data = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt, loader = accelerator.prepare(model, opt, DataLoader(data, batch_size=4))

    for step, (x, y) in enumerate(loader):
        loss = nn.functional.mse_loss(model(x), y)
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
        if step == 2:
            break
    accelerator.save_state(os.path.join(run_dir, "checkpoint-3"))
    accelerator.wait_for_everyone()

    # Resume into the same objects, as a restarted job does before going on.
    accelerator.load_state(os.path.join(run_dir, "checkpoint-3"))
    for x, y in loader:
        accelerator.backward(nn.functional.mse_loss(model(x), y))
        opt.step()
        opt.zero_grad()
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        shutil.rmtree(run_dir, ignore_errors=True)
    accelerator.print("done")


if __name__ == "__main__":
    main()
