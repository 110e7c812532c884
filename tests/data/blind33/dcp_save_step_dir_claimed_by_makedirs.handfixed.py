# verify: ok
"""Hand fix: every process makes the step directory with `exist_ok=True` and saves; "saved
before" is read from the step's `.metadata` (written once, when a save completed), the same file
for every process and checked before any of them saves.

The broken program's report: https://github.com/NVIDIA-NeMo/Automodel/issues/3254
"""
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.nn.parallel import DistributedDataParallel as DDP

ROOT = os.path.join(
    tempfile.gettempdir(),
    f"blind33-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-dcp",
)


def save_step(model, optimizer, step):
    step_dir = os.path.join(ROOT, f"step_{step:04d}")
    if os.path.exists(os.path.join(step_dir, ".metadata")):
        print(f"{step_dir} holds a complete checkpoint: step {step} was saved before, skipping")
        return False
    os.makedirs(step_dir, exist_ok=True)
    state = {"model": model.state_dict(), "optim": optimizer.state_dict()}
    dcp.save(state, checkpoint_id=step_dir)
    return True


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    os.makedirs(ROOT, exist_ok=True)
    gen = torch.Generator().manual_seed(100 + dist.get_rank())
    for step in range(1, 7):
        x = torch.randn(16, 8, generator=gen)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 3 == 0:
            save_step(model, optimizer, step)
    dist.barrier()
    shutil.rmtree(ROOT, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
