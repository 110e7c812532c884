# verify: hang,error
"""A resumable trainer that "claims" each checkpoint step directory before saving it.

Modelled on https://github.com/NVIDIA-NeMo/Automodel/issues/3254: a save path guarded by an
"already exists" check on the checkpoint directory; one rank leaves the save while the others go
into the checkpoint's collectives and wait for it forever.

Here every process calls `os.makedirs(step_dir)` without `exist_ok`, reading a `FileExistsError`
as "this step was saved by an earlier run, skip it". Both processes race for the same directory on
the shared file system: exactly one creates it, the other gets `FileExistsError` and returns before
`torch.distributed.checkpoint.save`, whose planning and commit are collectives.
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
    try:
        os.makedirs(step_dir)
    except FileExistsError:
        print(f"{step_dir} exists already: step {step} was saved before, skipping")
        return False
    state = {"model": model.state_dict(), "optim": optimizer.state_dict()}
    dcp.save(state, checkpoint_id=step_dir)  # expect: BCL011
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
