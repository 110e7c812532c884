# verify: ok check=GRAD_NORM
"""Correct: the async all_reduce overlaps with local work that does not touch its tensor, and the
tensor is read only after `work.wait()`."""
import torch
import torch.distributed as dist

GRAD_NORM = None


def main():
    global GRAD_NORM
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    grad = torch.full((1024,), float(rank + 1))
    work = dist.all_reduce(grad, async_op=True)
    other = torch.randn(64, 64) @ torch.randn(64, 64)  # independent compute, overlapped
    work.wait()
    GRAD_NORM = round(grad.norm().item(), 3)
    print(f"rank {rank}: grad norm {GRAD_NORM}, other {other.shape}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
