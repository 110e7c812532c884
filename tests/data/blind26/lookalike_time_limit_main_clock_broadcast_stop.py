# verify: ok
"""Look-alike of time_limit_clock_started_after_main_only_card.py: the same main-only data card and
per-process clocks, but after each step every process compares the limit with process 0's
elapsed time, received through `broadcast`, so all of them stop at the same step.
"""
import json
import os
import shutil
import tempfile
import time

import torch
from accelerate import Accelerator
from accelerate.utils import broadcast
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
        elapsed = torch.tensor([time.monotonic() - train_start])
        if broadcast(elapsed, from_process=0).item() > TIME_LIMIT:
            break
    print(f"process {accelerator.process_index} stopped at step {step}", flush=True)
    accelerator.wait_for_everyone()
    shutil.rmtree(RUN_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
