# verify: hang
"""A validation subgroup created only by the ranks that belong to it.

Modelled on pytorch/pytorch#25390 (https://github.com/pytorch/pytorch/issues/25390) and
pytorch/pytorch#134314 (https://github.com/pytorch/pytorch/issues/134314): `dist.new_group`
must be entered by every process of the job, members of the new group or not.

`Validator` runs validation on `eval_ranks` only (here rank 0) and sums its metrics over a
subgroup, which it creates in `__init__` under `if self.rank in eval_ranks:`. torch names
groups by counting `new_group` calls (its store barrier after creation is off unless
TORCH_DIST_INIT_BARRIER=1, so the call itself returns), and the CPU group the trainer creates
next for all ranks is group 1 on rank 0 and group 0 on rank 1: rank 0 never finishes creating
it, and rank 1 stays in it too or waits for rank 0 in the training step's all_reduce.
"""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F

EVAL_RANKS = [0]


class Validator:
    def __init__(self, eval_ranks: list[int]):
        self.rank = dist.get_rank()
        self.group = None
        if self.rank in eval_ranks:  # expect: BCL005
            self.group = dist.new_group(ranks=eval_ranks)

    def run(self, model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor):
        if self.group is None:
            return None
        with torch.no_grad():
            loss = F.mse_loss(model(x), y).reshape(1)
        dist.all_reduce(loss, group=self.group)
        return loss.item() / dist.get_world_size(self.group)


def train_step(model, opt, x, y, world: int) -> float:
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= world
    opt.step()
    return loss.item()


def main() -> None:
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    validator = Validator(EVAL_RANKS)
    # A CPU group for the end-of-epoch bookkeeping, with its own (long) timeout.
    bookkeeping = dist.new_group(backend="gloo", timeout=timedelta(minutes=30))
    g = torch.Generator().manual_seed(rank)
    for epoch in range(2):
        x, y = torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)
        loss = torch.tensor([train_step(model, opt, x, y, world)])
        dist.all_reduce(loss, group=bookkeeping)
        val = validator.run(model, x, y)
        if val is not None:
            print(f"epoch {epoch}: train loss {loss.item() / world:.4f}, val loss {val:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
