# verify: error,hang
"""A custom experiment tracker that averages the logged values across processes inside its `log`.

Modelled on https://github.com/huggingface/accelerate/pull/3777 ("Remove @on_main_process in
init_trackers"): Accelerate decorates its tracker entry points with `@on_main_process`, whatever a
tracker's own `main_process_only` says, so code that expects a tracker to run on every process only
runs on the main one. Here the tracker sets `main_process_only = False` and averages the epoch's
values with `accelerate.utils.reduce` before the main process appends them to a JSON-lines file.
`Accelerator.log` is itself `@on_main_process`: the main process enters the reduce, the other one
returns at once and goes on to the next epoch's backward (DDP's gradient all-reduce).
"""
import json
import os
import shutil
import tempfile

import torch
from accelerate import Accelerator
from accelerate.tracking import GeneralTracker
from accelerate.utils import reduce

RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind36-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-track",
)


class JsonlTracker(GeneralTracker):
    name = "jsonl"
    requires_logging_directory = True
    main_process_only = False  # every process averages; the main process writes

    def __init__(self, accelerator, logging_dir):
        super().__init__()
        self.accelerator = accelerator
        self.path = os.path.join(logging_dir, "metrics.jsonl")

    @property
    def tracker(self):
        return self.path

    def store_init_configuration(self, values):
        pass

    def log(self, values, step=None, **kwargs):
        keys = sorted(values)
        local = torch.tensor([float(values[k]) for k in keys])
        mean = reduce(local, reduction="mean")  # expect: BCL005
        if self.accelerator.is_main_process:
            with open(self.path, "a") as f:
                f.write(json.dumps({"step": step, **dict(zip(keys, mean.tolist()))}) + "\n")


def main():
    accelerator = Accelerator(cpu=True)
    os.makedirs(RUN_DIR, exist_ok=True)
    tracker = JsonlTracker(accelerator, RUN_DIR)
    accelerator.log_with = [tracker]
    accelerator.init_trackers("blind36")

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model, optimizer = accelerator.prepare(model, optimizer)
    gen = torch.Generator().manual_seed(10 + accelerator.process_index)
    x = torch.randn(16, 4, generator=gen)
    y = x.sum(dim=1, keepdim=True)

    for epoch in range(3):
        total = 0.0
        for i in range(0, 16, 4):
            loss = torch.nn.functional.mse_loss(model(x[i:i + 4]), y[i:i + 4])
            optimizer.zero_grad()
            accelerator.backward(loss)
            optimizer.step()
            total += loss.item()
        accelerator.log({"train_loss": total / 4, "epoch": epoch}, step=epoch)

    accelerator.wait_for_everyone()
    accelerator.end_training()
    if accelerator.is_main_process:
        print(open(tracker.path).read())
        shutil.rmtree(RUN_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
