# verify: ok
"""Hand fix of rotate_stale_checkpoints_every_process.py: only the main process removes the
stale checkpoints, and every process waits until it has.
"""
import os
import re
import shutil
import tempfile

import torch
from accelerate import Accelerator
from torch import nn

KEEP = 1
SAVE_EVERY = 2
STEPS = 6
ROOT = os.path.join(
    tempfile.gettempdir(),
    f"blind26-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-rotate",
)


def stale_checkpoints(root, keep, before_step):
    found = []
    for name in os.listdir(root):
        match = re.fullmatch(r"checkpoint-(\d+)", name)
        if match and int(match.group(1)) < before_step:
            found.append((int(match.group(1)), os.path.join(root, name)))
    found.sort()
    drop = len(found) - (keep - 1)
    return [path for _, path in found[:max(drop, 0)]]


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model, opt = accelerator.prepare(model, opt)
    os.makedirs(ROOT, exist_ok=True)
    gen = torch.Generator().manual_seed(accelerator.process_index)
    for step in range(1, STEPS + 1):
        x = torch.randn(8, 16, generator=gen)
        loss = nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))
        opt.zero_grad()
        accelerator.backward(loss)
        opt.step()
        if step % SAVE_EVERY == 0:
            stale = stale_checkpoints(ROOT, KEEP, step)
            accelerator.save_state(os.path.join(ROOT, f"checkpoint-{step}"))
            accelerator.wait_for_everyone()
            if accelerator.is_main_process:
                for path in stale:
                    shutil.rmtree(path)
            accelerator.wait_for_everyone()
    accelerator.wait_for_everyone()
    shutil.rmtree(ROOT, ignore_errors=True)
    accelerator.print("trained", STEPS, "steps")


if __name__ == "__main__":
    main()
