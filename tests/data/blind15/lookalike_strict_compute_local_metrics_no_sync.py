# verify: ok
"""Look-alike of `strict_warnings_skip_unupdated_metric_rank_zero_warn`: the metrics do not sync.

The same strict helper turns torchmetrics' warning into a skip on rank 0 only, but every metric is
built with `sync_on_compute=False`: each process reports its own rows, `compute()` runs no
collective, and skipping it on one process leaves nothing unmatched.
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


def strict_compute(metric):
    """The metric's value, or None when torchmetrics warns that it was never updated."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        try:
            return metric.compute()
        except UserWarning:
            return None


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    metrics = {split: MeanSquaredError(sync_on_compute=False) for split in SPLITS}
    for split, pred, target in ROWS[rank::world]:
        metrics[split].update(torch.tensor([pred]), torch.tensor([target]))

    report = {}
    for split in SPLITS:
        value = strict_compute(metrics[split])
        if value is not None:
            report[split] = float(value)
    print(f"evaluation on process {rank}:", report)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
