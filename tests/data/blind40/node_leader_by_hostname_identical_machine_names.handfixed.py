# verify: ok nproc=1 nnodes=2
"""Hand fix: the per-node leader is found by comparing the launcher's node rank, not hostnames.

Modelled on https://github.com/ROCm/mori/pull/387: ranks were grouped into nodes by hostname, and
on a cluster where every machine has one hostname all ranks counted as co-located, so the
per-node role and index were wrong on every node but the first.

Fixed as the report's fix does (a node identity other than the hostname, there `MORI_NODE_ID`):
every process gathers torchrun's node rank (`GROUP_RANK`), so each machine's first process unpacks
the shards onto its own disk, whatever the machines are called.
"""
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

BASE = os.path.join(
    tempfile.gettempdir(), f"blind40-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-scratch"
)


def node_scratch():
    # each machine's own local disk (two simulated nodes share this host)
    return os.path.join(BASE, f"node{os.environ['GROUP_RANK']}")


def is_node_leader():
    names = [None] * dist.get_world_size()
    dist.all_gather_object(names, os.environ["GROUP_RANK"])
    return names.index(names[dist.get_rank()]) == dist.get_rank()


def unpack_shards(dest):
    os.makedirs(dest, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    for i in range(dist.get_world_size()):
        x = torch.randn(16, 4, generator=g)
        torch.save({"x": x, "y": x.sum(1, keepdim=True)}, os.path.join(dest, f"shard{i}.pt"))


def main():
    dist.init_process_group("gloo")
    scratch = node_scratch()
    if is_node_leader():
        unpack_shards(scratch)
    dist.barrier()
    shard = torch.load(os.path.join(scratch, f"shard{dist.get_rank()}.pt"))
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(4):
        xb, yb = shard["x"][step * 4: step * 4 + 4], shard["y"][step * 4: step * 4 + 4]
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.barrier()
    shutil.rmtree(BASE, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
