# verify: error,hang nproc=1 nnodes=2
"""Sampler's `num_replicas` computed from a per-node count and a node count the launcher never set.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/17436: with FSDP on five
nodes, `num_replicas` was `num_nodes * num_processes` with `num_nodes` left at 1, so the
processes of every node but the first built a `DistributedSampler` with a rank outside
`[0, num_replicas - 1]` and raised `ValueError: Invalid rank 8, rank should be in the interval
[0, 7]`, while the first node's processes went on.

Here the program sizes its own sampler from `LOCAL_WORLD_SIZE` times `NNODES`, a variable its
SLURM script exported but `torchrun` does not (it defaults to 1). On two (simulated) nodes with one
process each, node 0's process builds a valid sampler and enters Fabric's backward (DDP's gradient
all-reduce); node 1's process raises in the sampler's constructor.
"""
import os

import torch
from lightning.fabric import Fabric
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def replicas_from_env():
    per_node = int(os.environ["LOCAL_WORLD_SIZE"])
    nodes = int(os.environ.get("NNODES", "1"))  # set by the cluster script, not by torchrun
    return per_node * nodes


def main():
    fabric = Fabric(accelerator="cpu", devices=1, num_nodes=2, strategy="ddp")
    fabric.launch()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    model, opt = fabric.setup(model, opt)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 4, generator=g)
    ds = TensorDataset(x, x.sum(1, keepdim=True))
    replicas = replicas_from_env()
    sampler = DistributedSampler(ds, replicas, fabric.global_rank, shuffle=False)  # expect: BCL011
    loader = fabric.setup_dataloaders(
        DataLoader(ds, batch_size=4, sampler=sampler), use_distributed_sampler=False
    )
    for xb, yb in loader:
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        opt.zero_grad()
        fabric.backward(loss)
        opt.step()
    fabric.barrier()


if __name__ == "__main__":
    main()
