# verify: ok
"""Look-alike of metric_compute_logger_level: the logging branch, guarded by a logger level that
differs between ranks, reads only the rank's own running value; the metric's reducing compute()
runs at the end of training on every rank.
"""
import logging
import os

import torch
import torch.distributed as dist

log = logging.getLogger("trainer")


class RunningMean:
    def __init__(self):
        self.total = torch.zeros(1)
        self.count = torch.zeros(1)

    def update(self, values):
        self.total += values.sum()
        self.count += values.numel()

    def local_value(self):
        return (self.total / self.count).item()

    def compute(self):
        state = torch.cat([self.total, self.count])
        dist.all_reduce(state)
        return (state[0] / state[1]).item()


def train(metric, steps=6, log_every=3):
    for step in range(1, steps + 1):
        metric.update(torch.rand(8))
        if step % log_every == 0 and log.isEnabledFor(logging.INFO):
            log.info("step %d local mean %.3f", step, metric.local_value())
    return metric.compute()


def main():
    dist.init_process_group("gloo")
    quiet = int(os.environ.get("RANK", "0")) != 0
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO, format="%(message)s")
    final = train(RunningMean())
    if log.isEnabledFor(logging.INFO):
        log.info("final mean %.3f", final)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
