# verify: ok
"""Hand fix of rank_suffixed_resume_path_writer_only: one checkpoint name for every rank.

Rank 0 still writes alone, but the file is named for the job rather than for the writer, so in
leg 2 every rank loads it and resumes at step 3; both run 3 backward passes.
"""
import os
import shutil
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

STEPS_PER_LEG = 3
CKPT_DIR = Path(tempfile.gettempdir()) / (
    f"blind25-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-resume"
)


def checkpoint_path() -> Path:
    return CKPT_DIR / "state.pt"


def batches(rank: int, start: int, stop: int):
    g = torch.Generator().manual_seed(100 + rank)
    data = [(torch.randn(4, 3, generator=g), torch.randn(4, 1, generator=g)) for _ in range(stop)]
    return list(enumerate(data))[start:stop]


def run_leg(leg: int, rank: int) -> None:
    torch.manual_seed(0)
    module = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(module.parameters(), lr=0.1)
    start = 0
    path = checkpoint_path()
    if path.exists():
        state = torch.load(path)
        module.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        start = state["step"]
    model = DDP(module)
    stop = STEPS_PER_LEG * leg
    for step, (x, y) in batches(rank, start, stop):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if rank == 0:
        state = {"model": module.state_dict(), "opt": opt.state_dict(), "step": stop}
        torch.save(state, path)
    dist.barrier()


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if rank == 0:
        shutil.rmtree(CKPT_DIR, ignore_errors=True)
        CKPT_DIR.mkdir(parents=True)
    dist.barrier()
    for leg in (1, 2):
        run_leg(leg, rank)
    if rank == 0:
        shutil.rmtree(CKPT_DIR, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
