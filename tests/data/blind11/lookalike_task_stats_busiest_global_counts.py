# verify: ok
"""Look-alike: the tasks are still sorted "busiest first", but by the counts after they were
all-reduced (one tensor of counts in a fixed task order), so every process sorts the same
numbers and visits the tasks in the same order.
"""
import os
from collections import Counter

import torch
import torch.distributed as dist

WIDTH = {"cls": 4, "span": 2, "tag": 6}
RECORDS = ["cls", "tag", "cls", "tag", "cls", "tag", "span", "tag", "cls", "span"]


class TaskStats:
    def __init__(self):
        self.sums = {task: torch.zeros(w) for task, w in WIDTH.items()}
        self.seen = Counter()

    def update(self, task, values):
        self.sums[task] += values
        self.seen[task] += 1

    def sync(self):
        names = sorted(WIDTH)
        counts = torch.tensor([float(self.seen[t]) for t in names])
        dist.all_reduce(counts)
        busiest = dict(zip(names, counts.tolist()))
        # busiest tasks first, by the counts of every process
        for task in sorted(names, key=lambda t: (-busiest[t], t)):
            dist.all_reduce(self.sums[task])
        return {task: s.tolist() for task, s in self.sums.items()}


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    stats = TaskStats()
    share = RECORDS[rank * 5:(rank + 1) * 5]
    for i, task in enumerate(share):
        stats.update(task, torch.full((WIDTH[task],), float(i + 1)))
    totals = stats.sync()
    if rank == 0:
        print(totals, flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
