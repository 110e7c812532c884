# verify: error,hang
"""Best-checkpoint directory named after the validation loss that each process computed itself.

Modelled on https://github.com/NVIDIA-BioNeMo/bionemo-recipes/pull/786: a checkpoint name pattern
`{epoch}-{val_loss:.2f}-...` gave the ranks different directories, because each rank's validation
loss differs. Here every process saves the new best model with `torch.distributed.checkpoint`
into `best-e{epoch}-{val_loss:.3f}` formatted from its own validation shard's loss: the
coordinator's metadata lands in one directory, the other process's shard in another, and reloading
the best checkpoint at the end fails on the process whose directory has no metadata.
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
    f"blind42-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-dcp-best",
)
EPOCHS = 3


def split(shard, seed):
    g = torch.Generator().manual_seed(seed + shard)
    x = torch.randn(64, 6, generator=g)
    return x, x[:, :3].sum(1, keepdim=True) + 0.3 * torch.randn(64, 1, generator=g)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    os.makedirs(ROOT, exist_ok=True)
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(6, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    (x, y), (vx, vy) = split(rank, 100), split(rank, 200)
    try:
        train_and_reload(model, opt, x, y, vx, vy, rank)
    finally:
        shutil.rmtree(ROOT, ignore_errors=True)
    dist.destroy_process_group()


def train_and_reload(model, opt, x, y, vx, vy, rank):
    best_loss, best_dir = float("inf"), None
    for epoch in range(EPOCHS):
        for xb, yb in zip(x.split(16), y.split(16)):
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            val_loss = torch.nn.functional.mse_loss(model.module(vx), vy).item()
        if val_loss < best_loss:
            best_loss = val_loss
            best_dir = os.path.join(ROOT, f"best-e{epoch}-{val_loss:.3f}")
            dcp.save({"model": model.module.state_dict()}, checkpoint_id=best_dir)  # expect: BCL009
    state = {"model": model.module.state_dict()}
    dcp.load(state, checkpoint_id=best_dir)
    model.module.load_state_dict(state["model"])
    print(f"process {rank}: reloaded {os.path.basename(best_dir)}")
    dist.barrier()


if __name__ == "__main__":
    main()
