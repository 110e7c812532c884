# verify: ok
"""Look-alike of lazy_log_format_peak_meter: the same meter and per-rank log level, but an f-string.

The meter of `mod_meters.py` all-reduces in `__str__`, and rank 1's logger is at WARNING, so its
`logger.info` drops the record. The message is an f-string, though: it is built, and the meter
formatted, on every rank before `logger.info` decides whether to emit it.
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
        hidden = model(torch.randn(8, 4, generator=gen))
        loss = hidden.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world
        opt.step()
        peak.observe(hidden.abs().max())
        if step % 2 == 1:
            logger.info(f"step {step} loss {loss.item():.4f} peak activation {peak}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
