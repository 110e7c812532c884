# verify: ok
"""Hand fix: the main process's clock decides; its "save due" flag is broadcast into a zero
placeholder on the other process, so every process calls `save_state` at the same step.

The broken program's report: https://github.com/declare-lab/nora/issues/8
"""
import os
import shutil
import tempfile
import time

import torch
from accelerate import Accelerator
from accelerate.utils import ProjectConfiguration, broadcast

SAVE_EVERY_S = 3.0
ROOT = os.path.join(
    tempfile.gettempdir(),
    f"blind33-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-state",
)


def decode(row):
    if row["slow"]:
        time.sleep(0.2)
    return torch.tensor(row["values"], dtype=torch.float32)


def main():
    config = ProjectConfiguration(project_dir=ROOT, automatic_checkpoint_naming=True, total_limit=2)
    accelerator = Accelerator(cpu=True, project_config=config)
    torch.manual_seed(0)
    rows = [{"values": [float(i % 5), 1.0, -1.0, 0.5], "slow": i >= 16} for i in range(32)]
    with accelerator.split_between_processes(rows) as shard:
        cache = torch.stack([decode(row) for row in shard])
    started = time.monotonic()
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model, optimizer = accelerator.prepare(model, optimizer)
    for step in range(12):
        batch = cache[(step * 4) % len(cache):][:4]
        loss = (model(batch) - batch.sum(dim=1, keepdim=True)).pow(2).mean()
        optimizer.zero_grad()
        accelerator.backward(loss)
        optimizer.step()
        time.sleep(0.05)
        due = torch.zeros(1)
        if accelerator.is_main_process:
            due += float(time.monotonic() - started >= SAVE_EVERY_S)
        due = broadcast(due)
        if due.item():
            accelerator.save_state()
            started = time.monotonic()
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        shutil.rmtree(ROOT, ignore_errors=True)
    accelerator.end_training()


if __name__ == "__main__":
    main()
