# verify: ok
"""Hand-fixed `strict_warnings_skip_unupdated_metric_rank_zero_warn`: "never updated" is decided together.

The report all-reduces each metric's `update_count` and skips a split only when no process updated
it; otherwise every process computes (and syncs) the metric, with torchmetrics' warning silenced
instead of turned into an error, so a warning emitted on rank 0 alone no longer decides anything.
"""
import warnings

import torch
import torch.distributed as dist
from torchmetrics.regression import MeanSquaredError

SPLITS = ["noisy", "clean"]
# (split, prediction, target); the noisy rows sit at odd positions, so they all go to process 1
ROWS = [
    ("clean", 1.0, 1.1),
    ("noisy", 0.2, 0.9),
    ("clean", 2.0, 1.8),
    ("noisy", 0.5, 0.1),
    ("clean", 0.3, 0.4),
    ("clean", 1.5, 1.2),
    ("clean", 0.7, 0.7),
    ("noisy", 1.1, 0.2),
]


def report_value(metric):
    """The metric's value, or None when no process ever updated it."""
    seen = torch.tensor([float(metric.update_count)])
    dist.all_reduce(seen)
    if seen.item() == 0:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return metric.compute()


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    metrics = {split: MeanSquaredError() for split in SPLITS}
    for split, pred, target in ROWS[rank::world]:
        metrics[split].update(torch.tensor([pred]), torch.tensor([target]))

    report = {}
    for split in SPLITS:
        value = report_value(metrics[split])
        if value is not None:
            report[split] = float(value)
    if rank == 0:
        print("evaluation:", report)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
