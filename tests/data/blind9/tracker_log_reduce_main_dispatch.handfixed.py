# verify: ok
"""Hand-fixed twin of tracker_log_reduce_main_dispatch: the loss is averaged before ``accelerator.log``.

Every process reduces the step's loss in the training loop (``accelerator.reduce``); the tracker
keeps the default ``main_process_only = True`` and only writes what it is given, so nothing that
communicates runs behind ``Accelerator.log``'s main-process dispatch.
"""
import json
import os
import tempfile

import torch
from accelerate import Accelerator
from accelerate.tracking import GeneralTracker


class MeanJsonlTracker(GeneralTracker):
    name = "mean_jsonl"
    requires_logging_directory = False

    def __init__(self, path):
        super().__init__()
        self.path = path

    @property
    def tracker(self):
        return self.path

    def store_init_configuration(self, values):
        pass

    def log(self, values, step=None, **kwargs):
        with open(self.path, "a") as f:
            f.write(json.dumps({"step": step, **values}) + "\n")


def main():
    run_dir = os.path.join(
        tempfile.gettempdir(), f"blind9-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-tracker"
    )
    os.makedirs(run_dir, exist_ok=True)
    tracker = MeanJsonlTracker(os.path.join(run_dir, "metrics.jsonl"))
    accelerator = Accelerator(cpu=True, log_with=[tracker])
    accelerator.init_trackers("blind9")
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = accelerator.prepare(model, opt)
    gen = torch.Generator().manual_seed(10 + accelerator.process_index)
    for step in range(4):
        x = torch.randn(4, 3, generator=gen)
        loss = model(x).pow(2).mean()
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
        mean_loss = accelerator.reduce(loss.detach(), reduction="mean")
        accelerator.log({"loss": mean_loss.item()}, step=step)
    total = accelerator.reduce(torch.tensor([1.0]), reduction="sum")
    accelerator.print(f"processes: {int(total.item())}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
