# verify: ok
"""Hand-fixed twin of masked_batches_forward_sync_on_step: every batch is fed, empty or not.

As pytorch/pytorch#74944 (https://github.com/pytorch/pytorch/pull/74944) made SyncBatchNorm do
with empty inputs, a process whose batch has no labelled frame still calls the metric, with an
empty selection (it adds nothing to the error sum or the count), so every process syncs at
every step; the step value is printed only when some frame was labelled.
"""
import torch
import torch.distributed as dist
from torchmetrics.regression import MeanAbsoluteError

IGNORE = -1.0
# per process: three batches of (predictions, targets)
BATCHES = {
    0: [([0.5, 1.0], [0.0, 1.5]), ([2.0, 2.5], [2.0, IGNORE]), ([1.0, 0.0], [1.5, 0.5])],
    1: [([0.2, 0.8], [0.0, 1.0]), ([3.0, 1.0], [IGNORE, IGNORE]), ([2.0, 2.2], [2.5, 2.0])],
}


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    metric = MeanAbsoluteError(dist_sync_on_step=True)
    for step, (preds, target) in enumerate(BATCHES[rank]):
        preds, target = torch.tensor(preds), torch.tensor(target)
        valid = target != IGNORE
        batch_mae = metric(preds[valid], target[valid])
        if rank == 0 and valid.any():
            print(f"step {step}: batch MAE {batch_mae.item():.3f}")
    epoch_mae = metric.compute()
    count = torch.tensor([1.0])
    dist.all_reduce(count)
    if rank == 0:
        print(f"epoch MAE {epoch_mae.item():.3f} over {int(count.item())} processes")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
