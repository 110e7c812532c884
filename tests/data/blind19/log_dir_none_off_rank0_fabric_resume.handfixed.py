# verify: ok
"""Hand fix: `get_log_dir()` returns the directory on every process (the fix asked for in
algorithmic-efficiency#412), so every rank loads the checkpoint.

Resume gated on a log directory that only the logging process knows.

Modelled on mlcommons/algorithmic-efficiency#412
(https://github.com/mlcommons/algorithmic-efficiency/issues/412): `get_log_dir()` returns None
on every process except rank 0, so with `--resume_last_run` only rank 0 loads the checkpoint and
the others start from scratch, and the job hangs. Here a first, preempted run saves a
checkpoint at step 3 with `fabric.save` on every rank; the restarted run asks `get_log_dir()`
where to resume from. Only rank 0 gets a path, so only rank 0 calls `fabric.load` (which ends
with a barrier) while rank 1 goes straight into its first DDP step.
"""
import os
import shutil
import tempfile
from dataclasses import dataclass

import torch
from lightning.fabric import Fabric


@dataclass
class RunConfig:
    experiment: str = "tiny-regression"
    total_steps: int = 6
    preempt_at: int = 3
    resume_last_run: bool = True
    lr: float = 0.05


def experiment_root(cfg: RunConfig) -> str:
    run = f"blind19-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
    return os.path.join(tempfile.gettempdir(), run, cfg.experiment)


def get_log_dir(fabric: Fabric, cfg: RunConfig):
    """Where this run's logs and checkpoints live; every process knows it, rank 0 creates it."""
    path = experiment_root(cfg)
    if fabric.global_rank == 0:
        os.makedirs(path, exist_ok=True)
    return path


def batch_for(step: int, rank: int) -> tuple:
    g = torch.Generator().manual_seed(100 * step + rank)
    x = torch.randn(8, 5, generator=g)
    return x, x.sum(dim=1, keepdim=True)


def run(fabric: Fabric, cfg: RunConfig, stop_at: int, resume: bool) -> dict:
    torch.manual_seed(0)
    model = torch.nn.Linear(5, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    model, optimizer = fabric.setup(model, optimizer)
    state = {"model": model, "optimizer": optimizer, "step": 0}
    ckpt_name = "last.ckpt"
    if resume and cfg.resume_last_run:
        log_dir = get_log_dir(fabric, cfg)
        if log_dir is not None and os.path.exists(os.path.join(log_dir, ckpt_name)):
            fabric.load(os.path.join(log_dir, ckpt_name), state)
    while state["step"] < stop_at:
        x, y = batch_for(state["step"], fabric.global_rank)
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        fabric.backward(loss)
        optimizer.step()
        state["step"] += 1
    fabric.save(os.path.join(experiment_root(cfg), ckpt_name), state)
    return state


def main() -> None:
    cfg = RunConfig()
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    if fabric.global_rank == 0:
        shutil.rmtree(experiment_root(cfg), ignore_errors=True)
    fabric.barrier()
    run(fabric, cfg, stop_at=cfg.preempt_at, resume=False)  # the preempted job
    state = run(fabric, cfg, stop_at=cfg.total_steps, resume=True)  # its restart
    fabric.print(f"finished at step {state['step']}")


if __name__ == "__main__":
    main()
