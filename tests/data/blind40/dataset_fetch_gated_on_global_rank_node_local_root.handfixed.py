# verify: ok nproc=1 nnodes=2
"""Hand fix: the dataset is fetched by each node's local rank 0 into that node's own disk.

Modelled on https://github.com/pytorch/ignite/issues/1922: the examples let `idist.get_rank() == 0`
download the dataset while the other ranks wait at a barrier, then every rank opens it. On one
machine that is fine; on two machines without a shared file system the data root is on each
node's local disk, and the second node's processes (global rank >= 1) find nothing there: the
fix was `get_local_rank()`, one download per node.

Fixed as in the report: `LOCAL_RANK` decides who downloads and who waits, so every node's first
process fills its own scratch folder and every process finds the file there.
"""
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

BASE = os.path.join(
    tempfile.gettempdir(), f"blind40-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-data"
)


def node_scratch():
    # each machine's own local disk (two simulated nodes share this host)
    return os.path.join(BASE, f"node{os.environ['GROUP_RANK']}")


def regression_set(root, download):
    path = os.path.join(root, "train.pt")
    if not os.path.exists(path):
        if not download:
            raise FileNotFoundError(f"dataset not found at {path}; use download=True")
        os.makedirs(root, exist_ok=True)
        g = torch.Generator().manual_seed(0)
        x = torch.randn(32, 4, generator=g)
        torch.save({"x": x, "y": x.sum(1, keepdim=True)}, path)
    return torch.load(path)


def get_dataflow():
    root = node_scratch()
    local_rank = int(os.environ["LOCAL_RANK"])
    if local_rank > 0:
        dist.barrier()  # let rank 0 download first
    data = regression_set(root, download=local_rank == 0)
    if local_rank == 0:
        dist.barrier()
    return data


def main():
    dist.init_process_group("gloo")
    data = get_dataflow()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    n = len(data["x"]) // dist.get_world_size()
    lo = dist.get_rank() * n
    for step in range(4):
        x = data["x"][lo + step * 4: lo + step * 4 + 4]
        y = data["y"][lo + step * 4: lo + step * 4 + 4]
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.barrier()
    shutil.rmtree(BASE, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
