# verify: ok
"""Look-alike: the same rank-0 temporary checkpoint, removed as early, but read by rank 0 alone.

Rank 0 writes the checkpoint file inside the same context manager and reads its bytes back; the
bytes reach the other process through `broadcast_object_list` (the approach of
pytorch/pytorch#194614), and every process loads from an in-memory buffer. Only rank 0 ever opens
the file, so removing it when rank 0 leaves the context cannot race a peer's read.

Original docstring of the broken program: a resume drill whose rank-0 temporary checkpoint is
deleted before the other process reads it.

Modelled on pytorch/pytorch#84881 (https://github.com/pytorch/pytorch/pull/84881) and
pytorch/pytorch#194614 (https://github.com/pytorch/pytorch/pull/194614): rank 0 creates a
temporary checkpoint file inside a context manager, every rank loads it after a barrier, and rank 0
removes the file when it leaves the context. Nothing holds rank 0 back until the others have
opened the file, so a rank that reaches `torch.load` later finds it gone (FileNotFoundError),
while rank 0 walks on into the next DDP step and waits for a peer that has died.

Here the drill runs after a few DDP steps: each process first rebuilds its data pipeline for its
own shard files (each read costs a round trip to the object store), then reloads the checkpoint
into a fresh model and checks it matches. Process 1 owns three shard files, process 0 one.
"""
import contextlib
import io
import os
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

SHARD_FILES = ["s0.pt", "s1.pt", "s2.pt", "s3.pt"]
OWNER = {"s0.pt": 0, "s1.pt": 1, "s2.pt": 1, "s3.pt": 1}
READ_LATENCY_S = 0.6
STEPS_BEFORE, STEPS_AFTER = 3, 3


def shared_dir() -> Path:
    tag = f"{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
    path = Path(tempfile.gettempdir()) / f"blind18-drill-{tag}"
    path.mkdir(exist_ok=True)
    return path


@contextlib.contextmanager
def rank0_temp_file(directory: Path):
    """Yields one file name, created by rank 0 and known to every rank."""
    holder = [None]
    if dist.get_rank() == 0:
        fd, holder[0] = tempfile.mkstemp(dir=directory, suffix=".ckpt")
        os.close(fd)
    dist.broadcast_object_list(holder, src=0)
    try:
        yield holder[0]
    finally:
        if dist.get_rank() == 0:
            os.remove(holder[0])


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))


def fetch_shard(name: str) -> torch.Tensor:
    time.sleep(READ_LATENCY_S)  # one object-store round trip per shard file
    g = torch.Generator().manual_seed(SHARD_FILES.index(name))
    return torch.randn(8, 7, generator=g)


def build_pipeline(rank: int) -> list[torch.Tensor]:
    return [fetch_shard(name) for name in SHARD_FILES if OWNER[name] == rank]


def train_steps(ddp: DDP, opt: torch.optim.Optimizer, rows: torch.Tensor, steps: int) -> None:
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(ddp(rows[:, :6]), rows[:, 6:])
        loss.backward()
        opt.step()


def resume_drill(ddp: DDP, opt: torch.optim.Optimizer, rank: int) -> bool:
    with rank0_temp_file(shared_dir()) as path:
        payload = [None]
        if rank == 0:
            torch.save({"model": ddp.module.state_dict(), "opt": opt.state_dict()}, path)
            payload[0] = Path(path).read_bytes()
        dist.broadcast_object_list(payload, src=0)
        pipeline = build_pipeline(rank)
        state = torch.load(io.BytesIO(payload[0]))
    fresh = make_model()
    fresh.load_state_dict(state["model"])
    same = all(torch.equal(a, b) for a, b in zip(fresh.state_dict().values(), ddp.module.state_dict().values()))
    print(f"rank {rank}: drill ok={same}, {len(pipeline)} shard(s) rebuilt", flush=True)
    return same


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    ddp = DDP(make_model())
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(100 + rank)
    rows = torch.randn(16, 7, generator=g)
    train_steps(ddp, opt, rows, STEPS_BEFORE)
    resume_drill(ddp, opt, rank)
    train_steps(ddp, opt, rows, STEPS_AFTER)
    print(f"rank {rank}: finished", flush=True)
    del ddp, opt
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
