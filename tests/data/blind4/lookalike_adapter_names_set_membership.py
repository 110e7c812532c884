# verify: ok
"""Look-alike of adapter_names_set_order.py: the set only answers membership questions.

`AdapterSync` keeps the adapter names in a set, as in the broken program, but `average()`
walks `named_parameters()`, in the order the modules registered them (the same on every rank),
and uses the set only to test `name in self.names`.
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
        for name, param in self.model.named_parameters():
            if name not in self.names:
                continue
            dist.all_reduce(param.grad)
            param.grad /= world


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
