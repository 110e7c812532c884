# verify: hang
"""The tracker's start (which ends in `wait_for_everyone`) skipped where WANDB_MODE is "disabled".

Modelled on https://github.com/starVLA/starVLA/pull/369 (W&B init only on the main process, a
rendezvous added after it, and `WANDB_MODE=disabled` honoured by skipping the init entirely).
`quiet_secondary_processes` (mod_tracking.py) sets `WANDB_MODE=disabled` on every process but the
main one, so `tracking_enabled()` is true only there, and `RunTracker.start`, whose
`accelerator.wait_for_everyone()` every process must reach, runs on the main process alone.
"""
import os
import tempfile

import torch
from accelerate import Accelerator

from mod_tracking import RunTracker, quiet_secondary_processes, tracking_enabled

RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind12-tracking-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}",
)
CONFIG = {"lr": 0.05, "steps": 4, "batch": 4}


def main():
    accelerator = Accelerator()
    quiet_secondary_processes(accelerator)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=CONFIG["lr"])
    model, optimizer = accelerator.prepare(model, optimizer)

    tracker = RunTracker(accelerator, RUN_DIR)
    if tracking_enabled():
        tracker.start(CONFIG)  # expect: BCL005

    g = torch.Generator().manual_seed(10 + accelerator.process_index)
    for step in range(CONFIG["steps"]):
        x = torch.randn(CONFIG["batch"], 4, generator=g)
        loss = torch.nn.functional.mse_loss(model(x).squeeze(-1), x.sum(dim=1))
        optimizer.zero_grad()
        accelerator.backward(loss)
        optimizer.step()
        mean_loss = accelerator.reduce(loss.detach(), reduction="mean")
        if tracking_enabled():
            tracker.log(step, {"loss": round(mean_loss.item(), 4)})
    if tracking_enabled():
        tracker.finish()
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
