# verify: ok
"""Hand fix: whether there is a checkpoint is read from the DCP `.metadata` file (one file, the
same for every process); a missing sidecar only means this process had nothing left over.

The broken program's report: https://github.com/mosaicml/composer/pull/3647
"""
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.nn.parallel import DistributedDataParallel as DDP

PACK = 8
CKPT = os.path.join(
    tempfile.gettempdir(),
    f"blind33-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-resume",
)


def pack(lengths):
    packs, buffer = [], []
    for n in lengths:
        buffer.append(n)
        if sum(buffer) >= PACK:
            packs.append(buffer)
            buffer = []
    return packs, buffer


def save(model, leftover):
    dcp.save({"model": model.state_dict()}, checkpoint_id=CKPT)
    if leftover:
        torch.save({"leftover": leftover}, os.path.join(CKPT, f"leftover_{dist.get_rank()}.pt"))


def resume(model):
    if not os.path.exists(os.path.join(CKPT, ".metadata")):
        print("no checkpoint to resume from, starting fresh")
        return []
    state = {"model": model.state_dict()}
    dcp.load(state, checkpoint_id=CKPT)
    model.load_state_dict(state["model"])
    try:
        extra = torch.load(os.path.join(CKPT, f"leftover_{dist.get_rank()}.pt"))
    except FileNotFoundError:
        return []
    return extra["leftover"]


def train(model, optimizer, packs):
    for p in packs:
        x = torch.full((1, 4), float(sum(p)))
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    lengths = [[3, 5, 2, 6, 4, 3], [4, 4, 2, 6]][dist.get_rank()]
    packs, leftover = pack(lengths)
    train(model, optimizer, packs)
    save(model, leftover)
    dist.barrier()

    fresh = DDP(torch.nn.Linear(4, 1))
    fresh_optimizer = torch.optim.SGD(fresh.parameters(), lr=1e-4)
    leftover = resume(fresh)
    packs, _ = pack(leftover + [5, 3, 4, 4])
    train(fresh, fresh_optimizer, packs)
    dist.barrier()
    shutil.rmtree(CKPT, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
