# verify: ok
"""fabric.save inside try/except OSError: the writer's error skips the barrier the others wait in.

Modelled on tier4/Diffusion-Planner#336 (https://github.com/tier4/Diffusion-Planner/pull/336)
("If one rank raises inside its job loop, the other ranks wait at the barrier") and
pytorch/pytorch#77091 (https://github.com/pytorch/pytorch/pull/77091) (synchronise checkpoint
errors across all ranks). Under DDP `fabric.save` writes on rank 0 and then calls a barrier. A
stale file named like the checkpoint directory (left by an older run) makes rank 0's write raise
FileExistsError before that barrier; the loop treats a failed save as a warning and trains on,
while rank 1, which wrote nothing, waits in the barrier.

Hand-fixed: the writer's check of the target is broadcast before `fabric.save`, and every process
skips the save together (as pytorch#77091 made checkpoint errors agreed by all ranks).
"""
import os
import tempfile
from pathlib import Path

import torch
from lightning.fabric import Fabric


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    run_dir = Path(tempfile.gettempdir()) / f"blind10-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
    run_dir.mkdir(exist_ok=True)
    (run_dir / "checkpoints").write_text("written by an older version of this script\n")

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = fabric.setup(model, opt)
    gen = torch.Generator().manual_seed(fabric.global_rank)
    for epoch in range(3):
        for _ in range(3):
            x = torch.randn(8, 4, generator=gen)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            fabric.backward(loss)
            opt.step()
        target = run_dir / "checkpoints"
        writable = fabric.broadcast(not target.exists() or target.is_dir())  # the writer's view
        if writable:
            fabric.save(target / f"epoch{epoch}.ckpt", {"model": model, "opt": opt})
        else:
            fabric.print(f"epoch {epoch}: {target} is not a directory, checkpoint not written")
    fabric.barrier()


if __name__ == "__main__":
    main()
