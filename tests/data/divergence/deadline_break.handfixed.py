"""The processes agree on the deadline: an all_reduce MAX of each one's out-of-time flag, then all
break together."""
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
        out_of_time = torch.tensor([int(time.time() - start > BUDGET_SECONDS)])
        dist.all_reduce(out_of_time, op=dist.ReduceOp.MAX)
        if out_of_time.item():
            break
        dist.all_reduce(model.weight.grad)
        steps += 1
    print(f"rank {rank}: stopped after {steps} steps")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
