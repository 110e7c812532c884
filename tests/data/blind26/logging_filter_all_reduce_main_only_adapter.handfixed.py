# verify: ok
"""Hand fix of logging_filter_all_reduce_main_only_adapter.py: the all-reduce moves out of the
filter into `sync()`, which every process calls before the log call; the filter, still run on
the main process only, just formats the synced count.
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
        self.total = 0

    def sync(self):
        total = torch.tensor([float(self.local)])
        dist.all_reduce(total)
        self.total = int(total.item())

    def filter(self, record):
        record.msg = f"{record.msg} | samples seen by all processes: {self.total}"
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
            samples.sync()
            logger.info("step %d loss %.4f", step, loss.item())
    accelerator.print("done")


if __name__ == "__main__":
    main()
