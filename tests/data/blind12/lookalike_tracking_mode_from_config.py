# verify: ok
"""Look-alike: the tracker's start (which ends in `wait_for_everyone`) is still gated on
`tracking_enabled()`, but WANDB_MODE comes from the run's configuration, the same on every process.

Resembles https://github.com/starVLA/starVLA/pull/369 (`WANDB_MODE=disabled` honoured by skipping
the init, and a rendezvous after it). Here no process sets the variable on its own: every process
applies `CONFIG["wandb_mode"]` before the test, so all of them start the tracker (and wait) or none
does; only the main process writes the run's files.
"""
import os
import tempfile

import torch
from accelerate import Accelerator

from mod_tracking import RunTracker, tracking_enabled

RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind12-tracking-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}",
)
CONFIG = {"lr": 0.05, "steps": 4, "batch": 4, "wandb_mode": "offline"}


def main():
    accelerator = Accelerator()
    os.environ["WANDB_MODE"] = CONFIG["wandb_mode"]  # the run's setting, on every process
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=CONFIG["lr"])
    model, optimizer = accelerator.prepare(model, optimizer)

    tracker = RunTracker(accelerator, RUN_DIR)
    if tracking_enabled():
        tracker.start(CONFIG)

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
