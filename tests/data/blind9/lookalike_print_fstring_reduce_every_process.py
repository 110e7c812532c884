# verify: ok
"""Look-alike: a reduce written inside a main-process-only call, evaluated on every process.

``accelerator.print`` prints on the main process only, but its argument, an f-string holding
``accelerator.reduce(...)``, is evaluated by every process before the call, so both processes
all-reduce each step. The tracker is a plain main-process writer.
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
        accelerator.print(f"step {step}: mean loss {accelerator.reduce(loss.detach(), reduction='mean').item():.4f}")
        accelerator.log({"local_loss": loss.item()}, step=step)
    total = accelerator.reduce(torch.tensor([1.0]), reduction="sum")
    accelerator.print(f"processes: {int(total.item())}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
