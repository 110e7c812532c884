# verify: hang
"""A custom tracker that averages across processes inside ``log()``, dispatched on the main process only.

Modelled on huggingface/accelerate#1079 (https://github.com/huggingface/accelerate/pull/1079:
trackers gained a ``main_process_only`` attribute deciding where ``log`` runs) and
huggingface/accelerate#303 (https://github.com/huggingface/accelerate/issues/303: custom
trackers). ``MeanJsonlTracker`` sets ``main_process_only = False`` and averages every value over
the processes (``accelerate.utils.reduce``) before the main process writes it, so that "every
process must call log". But ``Accelerator.log`` itself is decorated ``@on_main_process``: only
process 0 enters the tracker's ``log()`` and its all-reduce, while process 1 goes on to the next
step.
"""
import json
import os
import tempfile

import torch
from accelerate import Accelerator
from accelerate.tracking import GeneralTracker
from accelerate.utils import reduce


class MeanJsonlTracker(GeneralTracker):
    name = "mean_jsonl"
    requires_logging_directory = False
    main_process_only = False  # log() averages over the processes itself

    def __init__(self, path):
        super().__init__()
        self.path = path

    @property
    def tracker(self):
        return self.path

    def store_init_configuration(self, values):
        pass

    def log(self, values, step=None, **kwargs):
        row = {"step": step}
        for key, value in values.items():
            row[key] = reduce(torch.tensor([float(value)]), reduction="mean").item()  # expect: BCL005
        if int(os.environ.get("RANK", "0")) == 0:
            with open(self.path, "a") as f:
                f.write(json.dumps(row) + "\n")


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
        accelerator.log({"loss": loss.item()}, step=step)
    total = accelerator.reduce(torch.tensor([1.0]), reduction="sum")
    accelerator.print(f"processes: {int(total.item())}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
