# verify: hang
"""Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/7129: a metrics dict whose
keys depend on what each rank saw (here one entry per class present in the rank's own shard) is
synced key by key; a rank with fewer keys runs fewer gathers.
"""
from collections import defaultdict

import torch
from accelerate import Accelerator

SAMPLES = [
    ("cat", 0.9), ("dog", 0.7), ("bird", 0.4), ("cat", 0.8),
    ("dog", 0.6), ("cat", 0.5), ("dog", 0.3), ("cat", 0.2),
]


class PerClassAccuracy:
    def __init__(self):
        self.scores = defaultdict(list)

    def update(self, label, score):
        self.scores[label].append(score)

    def local_summary(self):
        return {label: torch.tensor([sum(v), len(v)], dtype=torch.float32) for label, v in sorted(self.scores.items())}


def evaluate(accelerator):
    metric = PerClassAccuracy()
    with accelerator.split_between_processes(SAMPLES) as shard:
        for label, score in shard:
            metric.update(label, score)
    summary = accelerator.gather(metric.local_summary())  # expect: BCL005
    return {k: (v[0::2].sum() / v[1::2].sum()).item() for k, v in summary.items()}


def main():
    accelerator = Accelerator()
    result = evaluate(accelerator)
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        print(result)


if __name__ == "__main__":
    main()
