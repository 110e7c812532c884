# verify: ok nproc=1 nnodes=2
"""Look-alike: sampler sized from `WORLD_SIZE` and `RANK`; the per-node count only sets threads.

Resembles sampler_replicas_from_unset_nnodes_env (a `DistributedSampler` built by the program from
environment variables, `LOCAL_WORLD_SIZE` read, two simulated nodes under Fabric), but the sampler
takes `WORLD_SIZE` and `RANK`, which torchrun sets for every process of the job; the per-node count
only divides this machine's CPU threads between its processes. Correct.
"""
import os

import torch
from lightning.fabric import Fabric
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def threads_per_process():
    per_node = int(os.environ["LOCAL_WORLD_SIZE"])
    return max(1, (os.cpu_count() or 1) // per_node)


def main():
    fabric = Fabric(accelerator="cpu", devices=1, num_nodes=2, strategy="ddp")
    fabric.launch()
    torch.set_num_threads(threads_per_process())
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    model, opt = fabric.setup(model, opt)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 4, generator=g)
    ds = TensorDataset(x, x.sum(1, keepdim=True))
    replicas, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
    sampler = DistributedSampler(ds, replicas, rank, shuffle=False)
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
