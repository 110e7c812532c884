# verify: hang
"""A lazy head materialised only by rank 0's model card; the parameter sync skips it.

Modelled on IntelLabs/matsciml#106 (https://github.com/IntelLabs/matsciml/issues/106: lazy
output blocks break DDP), Metta-AI/metta#2744 (https://github.com/Metta-AI/metta/pull/2744:
"Remove lazy linear because DDP can't wrap it") and pytorch/pytorch#68803
(https://github.com/pytorch/pytorch/issues/68803: ranks that broadcast different parameter sets
hang). The regressor's head is an ``nn.LazyLinear``. Rank 0 writes a model card with a dry-run
forward pass, which materialises the head there only; ``sync_parameters()`` then broadcasts every
initialised parameter from rank 0 and skips the uninitialised ones. Rank 0 broadcasts four
tensors, rank 1 two, and the ranks' later gradient all-reduces meet the wrong partners.
"""
import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parameter import UninitializedParameter


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 8)
        self.head = nn.LazyLinear(1)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


def write_model_card(model, path):
    with torch.no_grad():
        out = model(torch.zeros(1, 6))
    n = sum(p.numel() for p in model.parameters())
    with open(path, "w") as f:
        f.write(f"parameters: {n}\noutput shape: {tuple(out.shape)}\n")


def sync_parameters(model, src=0):
    for p in model.parameters():
        if isinstance(p, UninitializedParameter):
            continue  # not materialised yet: nothing to send
        dist.broadcast(p.data, src=src)  # expect: BCL005


def average_gradients(model):
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= dist.get_world_size()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(1234 + rank)
    run_dir = os.path.join(
        tempfile.gettempdir(), f"blind9-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-card"
    )
    os.makedirs(run_dir, exist_ok=True)
    model = Regressor()
    if rank == 0:
        write_model_card(model, os.path.join(run_dir, "model_card.txt"))
    sync_parameters(model)

    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(16, 6)
    y = x.sum(dim=1, keepdim=True)
    for step in range(3):
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        average_gradients(model)
        opt.step()
    checksum = torch.stack([p.detach().sum() for p in model.parameters()]).sum().reshape(1)
    dist.all_reduce(checksum)
    if rank == 0:
        print(f"checksum {checksum.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
