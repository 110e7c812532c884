# verify: ok
"""Look-alike of preview_loader_shifts_task_rng: rank 0's preview draws random numbers, from another RNG.

The multi-task run draws each step's task with `torch.randint` after a common seed. Rank 0 picks
the rows of its preview with Python's `random.sample`, whose state is separate from torch's, and
does not iterate a DataLoader, so the torch stream, and the tasks drawn from it, stay the same on
both ranks.
"""
import random

import torch
import torch.distributed as dist

TASKS = {"intent": 5, "slot": 9, "domain": 3}


class MultiTask(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = torch.nn.Linear(6, 8)
        self.heads = torch.nn.ModuleDict({t: torch.nn.Linear(8, n) for t, n in TASKS.items()})

    def forward(self, x, task):
        return self.heads[task](torch.relu(self.trunk(x)))


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1234)
    model = MultiTask()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    val_rows = torch.randn(6, 6)
    if rank == 0:
        picked = random.sample(range(len(val_rows)), 2)
        print("preview of the validation data:", val_rows[picked, :3].tolist())
    names = list(TASKS)
    data = torch.Generator().manual_seed(rank)
    for step in range(6):
        task = names[int(torch.randint(len(names), ()))]
        x = torch.randn(4, 6, generator=data)
        y = torch.randint(0, TASKS[task], (4,), generator=data)
        loss = torch.nn.functional.cross_entropy(model(x, task), y)
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            if p.grad is not None:
                dist.all_reduce(p.grad)
                p.grad /= world
        opt.step()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
