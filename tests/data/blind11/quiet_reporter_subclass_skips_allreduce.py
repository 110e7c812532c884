# verify: error
"""A quiet reporter subclass for the non-printing ranks overrides the method that all-reduces.

Shape of allenai/OLMo#453 (https://github.com/allenai/OLMo/pull/453): "If `reduce_global_loss`
is True, only rank0 reduces global loss and other ranks doesn't reduce"; see also
meta-pytorch/torchtune#233 (https://github.com/meta-pytorch/torchtune/issues/233), metric
logging on rank 0 only. Here `make_reporter` (mod_reporters.py) gives rank 0 a `StepReporter`,
whose `end_step` all-reduces the loss before printing, and every other rank a `QuietReporter`
whose `end_step` does nothing; the next collective on rank 1 is the gradient all-reduce.
"""
import os

import torch
import torch.distributed as dist

from mod_reporters import make_reporter

EVERY = 2
STEPS = 4


def average_gradients(model):
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= dist.get_world_size()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    reporter = make_reporter(rank, EVERY)
    gen = torch.Generator().manual_seed(100 + rank)
    for step in range(STEPS):
        x = torch.randn(8, 4, generator=gen)
        y = torch.randint(0, 3, (8,), generator=gen)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        average_gradients(model)
        opt.step()
        reporter.end_step(step, loss.item())  # expect: BCL005
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
