"""Meters whose text form is agreed across ranks (shared by the blind10 programs)."""
import torch
import torch.distributed as dist


class PeakMeter:
    """Largest value seen on any rank; formatting it asks the other ranks for theirs."""

    def __init__(self, unit):
        self.unit = unit
        self.local_peak = torch.zeros(1)

    def observe(self, value):
        self.local_peak = torch.maximum(self.local_peak, torch.tensor([float(value)]))

    def __str__(self):
        peak = self.local_peak.clone()
        dist.all_reduce(peak, op=dist.ReduceOp.MAX)
        return f"{peak.item():.2f}{self.unit}"
