# verify: hang,error
"""Abandon a gradient-accumulation window when the gradients are not finite, tested mid-window.

Modelled on https://github.com/rwth-i6/returnn/pull/1745 (an option to check for invalid
gradient norms and skip the update): the review points out that with gradient sync an inf or
NaN ends up on every node, so the check must come after the sync.

Here the micro-batches of a window run under `model.no_sync()` except the last, whose backward
runs DDP's gradient all-reduce. After each micro-batch the loop checks the gradients and
abandons the window (`break`) when one is not finite. Inside `no_sync` the gradients are this
process's own: one corrupted target, in one process's shard, makes them inf there only, so that
process skips the window's synchronising backward and the other does not. From then on the
processes pair different windows' all-reduces, and one ends with an all-reduce too many.
"""
import contextlib

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

WINDOWS, ACCUM, BATCH = 4, 3, 2


def shard(rank, world):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(WINDOWS * ACCUM * BATCH * world, 5, generator=g)
    y = x[:, :1] * 2.0 - x[:, 1:2]
    y[15] = float("inf")  # a corrupted target
    return x[rank::world], y[rank::world]


def grads_finite(model):
    return all(bool(torch.isfinite(p.grad).all()) for p in model.parameters() if p.grad is not None)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = shard(rank, world)
    updates = 0
    for window in range(WINDOWS):
        optimizer.zero_grad()
        for micro in range(ACCUM):
            row = (window * ACCUM + micro) * BATCH
            last = micro == ACCUM - 1
            with contextlib.nullcontext() if last else model.no_sync():
                loss = torch.nn.functional.mse_loss(model(x[row:row + BATCH]), y[row:row + BATCH])
                loss.backward()  # expect: BCL011
            if not grads_finite(model):
                print(f"process {rank}: window {window} has non-finite gradients, skipped", flush=True)
                break
        else:
            optimizer.step()
            updates += 1
    print(f"process {rank}: {updates} updates", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
