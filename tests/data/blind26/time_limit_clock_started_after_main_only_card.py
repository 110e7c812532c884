# verify: hang,error
"""A training-time limit measured from a clock each process starts after a main-only step.

Modelled on https://github.com/facebookresearch/fairseq/pull/2333 (an optional limit on total
training time: the start time is stored on the trainer and, inside the training loop, each
process stops after the first update that exceeds the limit).

Before training, `write_data_card` (decorated with `@accelerator.on_main_process`) summarises the
training set for the run's records (a sort of 4 million rows: 2.95 s alone on the 2-core
machine), which takes process 0 longer than the whole 2 s limit; process 1 skips it. Each
process then starts its own clock, so process 1's clock starts about 3 s earlier and passes the
limit after its first step: it leaves the loop and waits in the final barrier, while process 0
keeps training and waits in its next backward. The processes part ways through time.
"""
import json
import os
import shutil
import tempfile
import time

import torch
from accelerate import Accelerator
from torch import nn

TIME_LIMIT = 2.0
MAX_STEPS = 100_000
RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind26-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-card",
)


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    features = torch.randn(4_000_000, 4)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model, opt = accelerator.prepare(model, opt)
    os.makedirs(RUN_DIR, exist_ok=True)

    @accelerator.on_main_process
    def write_data_card(data):
        ordered = data.sort(dim=0).values
        card = {
            "rows": data.shape[0],
            "median": ordered[data.shape[0] // 2].tolist(),
            "p99": ordered[int(data.shape[0] * 0.99)].tolist(),
        }
        with open(os.path.join(RUN_DIR, "data_card.json"), "w") as f:
            json.dump(card, f)

    write_data_card(features)
    train_start = time.monotonic()
    gen = torch.Generator().manual_seed(accelerator.process_index)
    for step in range(MAX_STEPS):
        idx = torch.randint(0, features.shape[0], (32,), generator=gen)
        xb = features[idx]
        loss = nn.functional.mse_loss(model(xb), xb.sum(1, keepdim=True))
        opt.zero_grad()
        accelerator.backward(loss)
        opt.step()
        if time.monotonic() - train_start > TIME_LIMIT:  # expect: BCL011
            break
    print(f"process {accelerator.process_index} stopped at step {step}", flush=True)
    accelerator.wait_for_everyone()
    shutil.rmtree(RUN_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
