# verify: error
"""A strict report turns torchmetrics' "compute before update" warning into a skip, on rank 0 only.

Modelled on galilai-group/stable-pretraining#35
(https://github.com/galilai-group/stable-pretraining/pull/35), where with several evaluation sets
the metric of one set is computed without having been updated and torchmetrics warns "The
``compute`` method of metric MulticlassAccuracy was called before the ``update`` method", and on
NVIDIA/Megatron-LM#7451 (https://github.com/NVIDIA/Megatron-LM/pull/7451), whose
`warn_single_rank` shows how distributed libraries emit a warning on a single rank only.

Here the evaluation report computes one `MeanSquaredError` per split through `strict_compute`,
which turns warnings into errors (`warnings.simplefilter("error")`) and returns None for a metric
that torchmetrics reports as never updated. torchmetrics emits that warning with `rank_zero_warn`:
on process 0 only. The rows are dealt out `ROWS[rank::world]`, so only process 1 sees a "noisy" row.
On process 0 the "noisy" metric's warning becomes an exception before its state sync and the split
is skipped; process 1 syncs it. Process 0's "clean" sync pairs with process 1's "noisy" one, and
process 1's "clean" sync is left alone against process 0's final barrier (measured: that barrier
returned on process 0, which then left, and process 1 failed in the sync's `all_gather`).
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
            return metric.compute()  # expect: BCL011
        except UserWarning:
            return None


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    metrics = {split: MeanSquaredError() for split in SPLITS}
    for split, pred, target in ROWS[rank::world]:
        metrics[split].update(torch.tensor([pred]), torch.tensor([target]))

    report = {}
    for split in SPLITS:
        value = strict_compute(metrics[split])
        if value is not None:
            report[split] = float(value)
    if rank == 0:
        print("evaluation:", report)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
