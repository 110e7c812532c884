# verify: ok
"""Look-alike: a lazy head, a rank-0 model card and a sync that skips uninitialised parameters.

Every rank runs the dry-run forward pass that materialises the head (``materialise()``) before
the sync; only writing the card is left to rank 0. No parameter is uninitialised anywhere when
``sync_parameters()`` walks them, so both ranks broadcast the same four tensors.
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


def materialise(model):
    with torch.no_grad():
        return model(torch.zeros(1, 6))


def write_model_card(model, out, path):
    n = sum(p.numel() for p in model.parameters())
    with open(path, "w") as f:
        f.write(f"parameters: {n}\noutput shape: {tuple(out.shape)}\n")


def sync_parameters(model, src=0):
    for p in model.parameters():
        if isinstance(p, UninitializedParameter):
            continue  # not materialised yet: nothing to send
        dist.broadcast(p.data, src=src)


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
    out = materialise(model)
    if rank == 0:
        write_model_card(model, out, os.path.join(run_dir, "model_card.txt"))
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
