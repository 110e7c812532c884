# verify: ok
"""Modelled on https://github.com/pytorch/pytorch/pull/53773 (its failure case: "only rank 0
calls into monitored barrier, should result in error"): a health-check callback runs
dist.monitored_barrier, and the trainer fires its `on_log` callbacks only on the logging rank.
"""
from datetime import timedelta

import torch
import torch.distributed as dist


class HealthCheck:
    """Reports ranks that stopped responding, on every log step."""

    def __init__(self, timeout_s=5):
        self.timeout = timedelta(seconds=timeout_s)

    def on_log(self, trainer, logs):
        dist.monitored_barrier(timeout=self.timeout)
        if trainer.is_logging_rank:
            print("all ranks alive at step", logs["step"])


class Trainer:
    def __init__(self, callbacks, log_every=2):
        self.callbacks = callbacks
        self.log_every = log_every
        self.is_logging_rank = dist.get_rank() == 0

    def fire(self, hook, **kwargs):
        for cb in self.callbacks:
            getattr(cb, hook)(self, **kwargs)

    def fit(self, steps=4):
        for step in range(1, steps + 1):
            grad = torch.randn(4)
            dist.all_reduce(grad)
            if step % self.log_every == 0:  # every rank fires; the callback prints on one
                self.fire("on_log", logs={"step": step, "grad": grad.norm().item()})


def main():
    dist.init_process_group("gloo")
    Trainer([HealthCheck()]).fit()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
