# verify: ok
"""Hand-fixed: every process computes the confusion matrix; rank 0 hands the computed matrix, not
the metric, to the writing helper.

Modelled on https://github.com/microsoft/hi-ml/pull/261 and
https://github.com/microsoft/hi-ml/pull/450 (the outputs handler ran on global rank 0 only after
the epoch's results were gathered; calling `compute()` on the torchmetrics ConfusionMatrix there
triggered an all-gather and rank 0 hung waiting for the other processes). The predictions are
gathered with `all_gather_object` on every process; `save_outputs` (mod_outputs.py) then computes
the metric handed to it, and only rank 0 calls it.
"""
import os
import tempfile

import torch
import torch.distributed as dist
from torchmetrics.classification import MulticlassConfusionMatrix

from mod_outputs import save_outputs

OUT_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind12-outputs-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}",
)
NUM_CLASSES = 3


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, NUM_CLASSES).eval()
    x = torch.randn(12, 4, generator=torch.Generator().manual_seed(1))
    y = torch.arange(12) % NUM_CLASSES
    confusion = MulticlassConfusionMatrix(num_classes=NUM_CLASSES)
    rows = []
    with torch.no_grad():
        for i in range(rank, 12, world):
            pred = model(x[i : i + 1]).argmax(dim=1)
            confusion.update(pred, y[i : i + 1])
            rows.append((i, int(pred), int(y[i])))
    gathered = [None] * world
    dist.all_gather_object(gathered, rows)
    matrix = confusion.compute()  # the metric's sync, on every process
    if rank == 0:
        save_outputs(sorted(r for part in gathered for r in part), matrix, OUT_DIR)
        print("confusion matrix", matrix.tolist())
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
