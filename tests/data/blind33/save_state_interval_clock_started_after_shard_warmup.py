# verify: hang,error
"""Accelerate training that saves its full state every SAVE_EVERY_S seconds of training time,
with automatic checkpoint naming and a limit on how many checkpoints are kept.

Modelled on https://github.com/declare-lab/nora/issues/8: `accelerator.save_state` reached by only
some processes hangs (here, with automatic checkpoint naming, it calls `wait_for_everyone`).

Each process starts its save clock once its own shard is warmed up (decoding its rows; process
1's half holds the slow rows, 3.2 s of them) and before `prepare`, whose DDP wrap is the first point
where the processes wait for each other. From there on they run in step, so process 0's clock stays
about 3.2 s ahead: after the first step it finds a save due and enters `save_state`'s barrier,
while process 1's clock (about 1.2 s after the first step, most of it start-up) stays under
SAVE_EVERY_S for the whole 12-step run, so process 1 never saves.
"""
import os
import shutil
import tempfile
import time

import torch
from accelerate import Accelerator
from accelerate.utils import ProjectConfiguration

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
        if time.monotonic() - started >= SAVE_EVERY_S:
            accelerator.save_state()  # expect: BCL011
            started = time.monotonic()
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        shutil.rmtree(ROOT, ignore_errors=True)
    accelerator.end_training()


if __name__ == "__main__":
    main()
