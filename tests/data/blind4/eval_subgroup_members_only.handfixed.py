# verify: ok
"""Hand-fixed twin of eval_subgroup_members_only.py: every rank enters `new_group`.

Modelled on pytorch/pytorch#25390 (https://github.com/pytorch/pytorch/issues/25390): every
process calls `dist.new_group(ranks=eval_ranks)`, members or not, so the groups are numbered
alike on every rank; the non-members keep no handle and skip validation.
"""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F

EVAL_RANKS = [0]


class Validator:
    def __init__(self, eval_ranks: list[int]):
        self.rank = dist.get_rank()
        group = dist.new_group(ranks=eval_ranks)
        self.group = group if self.rank in eval_ranks else None

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
