# verify: ok nproc=1 nnodes=2
"""Look-alike: hostnames gathered for a node report; each node's leader is its local rank 0.

Resembles node_leader_by_hostname_identical_machine_names (every process's hostname gathered
with `all_gather_object`, a leader per node unpacks the shards onto that node's local disk, two
simulated nodes reporting one hostname), but the hostnames only label the printed report; the
leader is the process torchrun started first on its node (`LOCAL_RANK == 0`), which each node has
whatever the machines are called. Correct.
"""
import os
import shutil
import socket
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


def node_report():
    names = [None] * dist.get_world_size()
    dist.all_gather_object(names, socket.gethostname())
    return ", ".join(f"rank {r} on {n}" for r, n in enumerate(names))


def unpack_shards(dest):
    os.makedirs(dest, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    for i in range(dist.get_world_size()):
        x = torch.randn(16, 4, generator=g)
        torch.save({"x": x, "y": x.sum(1, keepdim=True)}, os.path.join(dest, f"shard{i}.pt"))


def main():
    dist.init_process_group("gloo")
    scratch = node_scratch()
    print(node_report())
    if int(os.environ["LOCAL_RANK"]) == 0:
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
