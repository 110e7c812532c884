"""The norm is read after `work.wait()`, from the reduced gradient."""
import time

import torch
import torch.distributed as dist

GRAD_NORM = None


def main():
    global GRAD_NORM
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    grad = torch.full((1024,), float(rank + 1))
    if rank == 1:
        time.sleep(1.0)  # a slower backward pass on this rank
    work = dist.all_reduce(grad, async_op=True)
    work.wait()
    GRAD_NORM = round(grad.norm().item(), 3)
    scale = min(1.0, 10.0 / GRAD_NORM)
    print(f"rank {rank}: grad norm {GRAD_NORM}, clip scale {scale:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
