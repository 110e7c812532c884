# verify: divergent check=GRAD_NORM
"""Overlapping communication with compute: the gradient all_reduce is started with
`async_op=True`, and the gradient norm for clipping is read from the same tensor before
`work.wait()`. Rank 0 reads its own, unreduced gradient (rank 1 has not joined yet: its backward is
slower), so the processes clip with different norms.

Modelled on NVIDIA/physicsnemo#1761 (https://github.com/NVIDIA/physicsnemo/pull/1761), whose test
spells out that until `wait()` the outputs of an async all-reduce are the rank's local values, and
pytorch/pytorch#147309 (https://github.com/pytorch/pytorch/issues/147309) on what `work.wait()`
does and does not synchronise.
"""
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
    GRAD_NORM = round(grad.norm().item(), 3)  # expect: NEW-async
    work.wait()
    scale = min(1.0, 10.0 / GRAD_NORM)
    print(f"rank {rank}: grad norm {GRAD_NORM}, clip scale {scale:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
