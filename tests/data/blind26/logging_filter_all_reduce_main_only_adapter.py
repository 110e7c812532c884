# verify: error,hang
"""A logging filter that all-reduces, attached behind accelerate's main-process-only logger.

Modelled on https://github.com/netket/netket/pull/2272 (a logger reduced the statistics it was
about to write inside its `if self._is_master_process:` gate; the reduction was a collective, so
multi-process runs hung at the first logged step).

`GlobalSamples` is a `logging.Filter` that adds the number of samples seen by all processes to
each record, through `torch.distributed.all_reduce`. It is attached to the logger that
`accelerate.logging.get_logger` wraps; `logger.info(...)` reaches that logger on the main
process only (`main_process_only=True` is the adapter's default), so only process 0 runs the
filter's all-reduce, while process 1 goes on to its next backward. The processes part ways
through a framework helper, with no rank test in the program.
"""
import logging

import torch
import torch.distributed as dist
from accelerate import Accelerator
from accelerate.logging import get_logger
from torch import nn

STEPS = 8
LOG_EVERY = 4

logger = get_logger(__name__, log_level="INFO")


class GlobalSamples(logging.Filter):
    def __init__(self):
        super().__init__()
        self.local = 0

    def filter(self, record):
        total = torch.tensor([float(self.local)])
        dist.all_reduce(total)
        record.msg = f"{record.msg} | samples seen by all processes: {int(total.item())}"
        return True


def main():
    logging.basicConfig(format="%(message)s")
    accelerator = Accelerator(cpu=True)
    samples = GlobalSamples()
    logger.logger.addFilter(samples)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    model, opt = accelerator.prepare(model, opt)
    gen = torch.Generator().manual_seed(accelerator.process_index)
    for step in range(1, STEPS + 1):
        x = torch.randn(4, 16, generator=gen)
        loss = nn.functional.mse_loss(model(x), x.mean(1, keepdim=True))
        opt.zero_grad()
        accelerator.backward(loss)
        opt.step()
        samples.local += len(x)
        if step % LOG_EVERY == 0:
            logger.info("step %d loss %.4f", step, loss.item())  # expect: BCL011
    accelerator.print("done")


if __name__ == "__main__":
    main()
