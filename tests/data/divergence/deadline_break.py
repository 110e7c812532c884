# verify: error
"""A time budget: each process checks its own wall clock before the step's gradient all_reduce
and leaves the loop once the budget is spent. Rank 1's steps take longer (it sleeps, standing in
for a slower data pipeline), so it crosses the deadline one step before rank 0, which then waits
alone in the all_reduce.

Modelled on IBM/ado#41 (https://github.com/IBM/ado/pull/41): stopping a training job after
`stop_after_seconds` had to be agreed across workers with a reduce, since each worker's own
clock decides differently.
"""
import time

import torch
import torch.distributed as dist

BUDGET_SECONDS = 1.25


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = torch.nn.Linear(4, 1)
    dist.barrier()
    start = time.time()
    steps = 0
    for step in range(100):
        model(torch.randn(8, 4)).pow(2).mean().backward()
        if rank == 1:
            time.sleep(0.5)  # a slower input pipeline on this host
        if time.time() - start > BUDGET_SECONDS:
            break
        dist.all_reduce(model.weight.grad)  # expect: BCL005
        steps += 1
    print(f"rank {rank}: stopped after {steps} steps")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
