# verify: hang,error
"""Resume looks for a checkpoint named after this process's rank, but only rank 0 ever writes one.

Modelled on https://github.com/intelligent-machine-learning/dlrover/pull/1034 ("All ranks of DDP
should load the checkpoint of rank_0.pt"): the checkpoint helper names files per rank, the save
is done by rank 0 alone because DDP replicas are identical, and on restart every other rank finds
no file of its own and starts again from step 0. The job trains in two legs, as a preempted job
would: leg 1 trains steps 0-2 and saves; leg 2 resumes and trains up to step 6. In leg 2 rank 0
resumes at step 3 and runs 3 backward passes, rank 1 starts at 0 and runs 6: its fourth DDP
gradient all-reduce has no partner (rank 0 waits in the barrier after the leg).
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


def checkpoint_path(rank: int) -> Path:
    return CKPT_DIR / f"state-rank{rank}.pt"


def batches(rank: int, start: int, stop: int):
    g = torch.Generator().manual_seed(100 + rank)
    data = [(torch.randn(4, 3, generator=g), torch.randn(4, 1, generator=g)) for _ in range(stop)]
    return list(enumerate(data))[start:stop]


def run_leg(leg: int, rank: int) -> None:
    torch.manual_seed(0)
    module = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(module.parameters(), lr=0.1)
    start = 0
    path = checkpoint_path(rank)
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
        loss.backward()  # expect: BCL011
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
