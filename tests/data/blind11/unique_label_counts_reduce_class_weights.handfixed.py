# verify: ok
"""Hand fix: `torch.bincount(labels, minlength=NUM_CLASSES)`, one count per class on every process.

Broken version: class counts from `torch.unique(..., return_counts=True)` summed with `accelerator.reduce`.

Shape of pytorch/pytorch#151722 (https://github.com/pytorch/pytorch/issues/151722), whose
`torch.unique` output has a data-dependent size (unlike `torch.bincount(..., minlength=...)`),
and pytorch/pytorch#12598 (https://github.com/pytorch/pytorch/issues/12598): class-balancing
weights from label counts summed over the processes. `unique` returns one count per class
present in the process's share: 3 classes on rank 0, 2 on rank 1, so the two processes all-reduce
tensors of 3 and 2 elements.
"""
import os

import torch
from accelerate import Accelerator

NUM_CLASSES = 3
LABELS = [0, 1, 2, 1, 0, 2, 0, 2, 2, 0]


def main():
    accelerator = Accelerator(cpu=True)
    with accelerator.split_between_processes(LABELS) as mine:
        labels = torch.tensor(mine)
    counts = torch.bincount(labels, minlength=NUM_CLASSES)
    totals = accelerator.reduce(counts, reduction="sum")
    weights = totals.sum() / (NUM_CLASSES * totals.float())
    accelerator.print("class weights", weights.tolist())
    accelerator.wait_for_everyone()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
