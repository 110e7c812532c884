# verify: hang
"""A log line whose %s argument all-reduces when logging formats it, on the rank that logs only.

Modelled on open-mmlab/mmcv#252 (https://github.com/open-mmlab/mmcv/pull/252), where the text logger
called `_get_max_memory()` (a `dist.reduce`) only on processes whose log buffer had output, and on
firedrakeproject/firedrake#2771 (https://github.com/firedrakeproject/firedrake/pull/2771) ("make sure
dat.data_ro is accessed on all ranks"). Here the peak-activation meter of `mod_meters.py` agrees on
its value in `__str__`. `logger.info("... %s", meter)` formats lazily: `__str__` runs only where the
record is emitted, and the logger is set up, as usual, at INFO on rank 0 and WARNING elsewhere.
"""
import logging

import torch
import torch.distributed as dist

from mod_meters import PeakMeter


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    logging.basicConfig(format="%(message)s")
    logger = logging.getLogger("train")
    logger.setLevel(logging.INFO if rank == 0 else logging.WARNING)

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    peak = PeakMeter("")
    gen = torch.Generator().manual_seed(rank)
    for step in range(6):
        x = torch.randn(8, 4, generator=gen)
        hidden = model(x)
        loss = hidden.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world
        opt.step()
        peak.observe(hidden.abs().max())
        if step % 2 == 1:
            logger.info("step %d loss %.4f peak activation %s", step, loss.item(), peak)  # expect: BCL005
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
