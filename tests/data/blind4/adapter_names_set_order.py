# verify: error
"""Adapter gradients all-reduced in the iteration order of a set of parameter names.

Modelled on RLinf/RLinf#1355 (https://github.com/RLinf/RLinf/pull/1355), "sort para in bucket
syncer to prevent hang": `param_names_need_sync` was a plain set, so the order of the syncs
differed between ranks.

`AdapterSync` keeps the names of the trainable adapter parameters in a set. The order in which
Python iterates a set of strings follows the strings' hashes, which each interpreter salts
at random (PYTHONHASHSEED), so the two processes walk the names in different orders and
all-reduce tensors of different sizes against each other (a `down` weight of 128 floats
against a `down` bias of 4, say): gloo aborts on the size mismatch.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, dim: int = 32, rank: int = 4):
        super().__init__()
        self.proj = torch.nn.Linear(dim, dim)
        self.down = torch.nn.Linear(dim, rank)
        self.up = torch.nn.Linear(rank, dim)

    def forward(self, x):
        return self.proj(x) + self.up(self.down(x))


class AdapterSync:
    def __init__(self, model: torch.nn.Module):
        self.model = model
        self.names = {n for n, p in model.named_parameters() if ".down." in n or ".up." in n}
        for n, p in model.named_parameters():
            p.requires_grad_(n in self.names)

    def average(self, world: int) -> None:
        params = dict(self.model.named_parameters())
        for name in self.names:  # expect: BCL005
            grad = params[name].grad
            dist.all_reduce(grad)
            grad /= world


def main() -> None:
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = torch.nn.Sequential(*(Block() for _ in range(4)))
    sync = AdapterSync(model)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01)
    g = torch.Generator().manual_seed(rank)
    for step in range(2):
        x, y = torch.randn(8, 32, generator=g), torch.randn(8, 32, generator=g)
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        sync.average(world)
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
