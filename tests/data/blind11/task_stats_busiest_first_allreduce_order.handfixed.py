# verify: ok
"""Hand fix: the tasks are visited in the order of their names, the same on every process (as
apex#18 sorted its keys).

Broken version: per-task statistics all-reduced in an order sorted by each process's own counts.

Shape of NVIDIA/apex#19 (https://github.com/NVIDIA/apex/issues/19) and its fix #18
(https://github.com/NVIDIA/apex/pull/18): a loop over a container whose order differs between
processes, with a collective in its body, so the processes all-reduce different tensors at the
same point. Here `TaskStats.sync` visits the tasks "busiest first" by the process's own number
of records per task; rank 0's share is mostly `cls`, rank 1's mostly `tag`, and the sums have
different sizes per task.
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
        for task in sorted(self.sums):
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
