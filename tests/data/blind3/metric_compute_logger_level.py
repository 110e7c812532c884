# verify: error
"""Modelled on https://github.com/Lightning-AI/torchmetrics/issues/2758: a metric whose
compute() all-reduces its state is computed only inside a logging statement that only one rank
runs (there `if local_rank == 0: print(metric.compute())`; here the logger's level, set per rank).
"""
import logging
import os

import torch
import torch.distributed as dist

log = logging.getLogger("trainer")


class RunningMean:
    """Keeps a local sum and count; compute() syncs them across ranks, like torchmetrics."""

    def __init__(self):
        self.total = torch.zeros(1)
        self.count = torch.zeros(1)

    def update(self, values):
        self.total += values.sum()
        self.count += values.numel()

    def compute(self):
        state = torch.cat([self.total, self.count])
        dist.all_reduce(state)
        return (state[0] / state[1]).item()


def configure_logging():
    quiet = int(os.environ.get("RANK", "0")) != 0
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO, format="%(message)s")


def sync_grads(model):
    for p in model.parameters():
        dist.all_reduce(p.grad)


def train(model, metric, steps=6, log_every=3):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(1, steps + 1):
        x = torch.randn(8, 4)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        sync_grads(model)
        opt.step()
        metric.update(loss.detach().reshape(1))
        if step % log_every == 0 and log.isEnabledFor(logging.INFO):
            log.info("step %d loss %.4f", step, metric.compute())  # expect: BCL005


def main():
    dist.init_process_group("gloo")
    configure_logging()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 4)
    train(model, RunningMean())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
