# verify: ok nproc=1 nnodes=2
"""Look-alike: dataset fetched by global rank 0 only, into a data root that both nodes share.

Resembles dataset_fetch_gated_on_global_rank_node_local_root (global rank 0 downloads while the
others wait at a barrier, the others open the file with `download=False`, two simulated nodes), but
the data root is one folder on the shared file system, not a folder per node: what rank 0 writes
is what rank 1 opens after the barrier. The report's own maintainers defended this layout for
shared storage (https://github.com/pytorch/ignite/issues/1922). Correct.
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


def shared_root():
    # one folder on the file system every node mounts
    return os.path.join(BASE, "shared")


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
    root = shared_root()
    if dist.get_rank() > 0:
        dist.barrier()  # let rank 0 download first
    data = regression_set(root, download=dist.get_rank() == 0)
    if dist.get_rank() == 0:
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
