# verify: ok
"""Hand-fixed twin of time_budget_per_process_clock.py: the ranks agree on when time is up.

Modelled on pytorch/pytorch#22834 (https://github.com/pytorch/pytorch/issues/22834), where the
maintainer advised using timing information agreed by all processes: each rank still reads its
own clock, but the verdicts are all-reduced (MAX) before the `break`, so every rank leaves the
loop at the same step, as soon as any rank is out of time.
"""
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

BUDGET_S = 3.0
STEP_S = 0.2


class BudgetedTrainer:
    def __init__(self, budget_s: float):
        self.started = time.monotonic()
        self.budget_s = budget_s
        self.steps = 0

    def out_of_time(self) -> bool:
        late = torch.tensor([float(time.monotonic() - self.started > self.budget_s)])
        dist.all_reduce(late, op=dist.ReduceOp.MAX)
        return bool(late.item())

    def fit(self, model: DDP, opt: torch.optim.Optimizer, batches) -> None:
        for x, y in batches:
            if self.out_of_time():
                break
            opt.zero_grad()
            F.mse_loss(model(x), y).backward()
            opt.step()
            self.steps += 1


def write_run_card() -> None:
    time.sleep(1.5)  # stand-in for rendering and uploading the run's config


def batches(rank: int, n: int = 40):
    g = torch.Generator().manual_seed(rank)
    for _ in range(n):
        time.sleep(STEP_S)  # stand-in for loading and collating a batch
        yield torch.randn(16, 8, generator=g), torch.randn(16, 1, generator=g)


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if rank == 0:
        write_run_card()
    trainer = BudgetedTrainer(BUDGET_S)
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    trainer.fit(model, opt, batches(rank))
    print(f"rank {rank}: {trainer.steps} steps within the budget")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
