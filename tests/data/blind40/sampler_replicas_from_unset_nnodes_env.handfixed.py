# verify: ok nproc=1 nnodes=2
"""Hand fix: the sampler's `num_replicas` is the job's world size, not a per-node count times `NNODES`.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/17436: with FSDP on five
nodes, `num_replicas` was `num_nodes * num_processes` with `num_nodes` left at 1, so the
processes of every node but the first built a `DistributedSampler` with a rank outside
`[0, num_replicas - 1]` and raised `ValueError: Invalid rank 8, rank should be in the interval
[0, 7]`, while the first node's processes went on.

Fixed as the report's fix does: the number of replicas is the world size the process group
reports (`fabric.world_size`), whatever the launcher exported, so every process's rank is in range.
"""
import torch
from lightning.fabric import Fabric
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

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
    sampler = DistributedSampler(ds, fabric.world_size, fabric.global_rank, shuffle=False)
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
