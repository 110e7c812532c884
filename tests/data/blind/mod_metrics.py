"""Metric bookkeeping shared by the programs of this directory (not a program itself)."""
import torch


class AverageMeter:
    def __init__(self, name):
        self.name = name
        self.sum = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


class MetricsTracker:
    def __init__(self, accelerator, *names):
        self.accelerator = accelerator
        self.meters = {name: AverageMeter(name) for name in names}

    def update(self, **values):
        for name, value in values.items():
            self.meters[name].update(value)

    def reduce_across_ranks(self):
        stats = torch.tensor([[m.sum, m.count] for m in self.meters.values()], device=self.accelerator.device)
        stats = self.accelerator.reduce(stats, reduction="sum")
        for meter, (total, count) in zip(self.meters.values(), stats.tolist()):
            meter.sum, meter.count = total, int(count)

    def __str__(self):
        return " ".join(f"{m.name}={m.avg:.4f}" for m in self.meters.values())
