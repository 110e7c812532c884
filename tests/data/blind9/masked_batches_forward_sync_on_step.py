# verify: hang
"""A ``dist_sync_on_step=True`` metric called only on batches that have unmasked targets.

Modelled on pytorch/pytorch#74944 (https://github.com/pytorch/pytorch/pull/74944: "When a process
receives empty inputs, it will ... participate in the all_gather collective communications") and
alex-hh/profam#519 (https://github.com/alex-hh/profam/pull/519: "sync_dist=True was causing
occasional hangs"). A per-step validation MAE is a ``MeanAbsoluteError(dist_sync_on_step=True)``,
so every ``metric(preds, target)`` call gathers the metric's states from all processes. Targets
equal to ``IGNORE`` (unlabelled frames) are masked out, and a batch with no labelled frame is
skipped: ``if valid.any(): metric(...)``. Process 1's second batch is all unlabelled, so it
syncs twice in the loop and process 0 three times.
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
        if valid.any():
            batch_mae = metric(preds[valid], target[valid])  # expect: BCL011
            if rank == 0:
                print(f"step {step}: batch MAE {batch_mae.item():.3f}")
    epoch_mae = metric.compute()
    count = torch.tensor([1.0])
    dist.all_reduce(count)
    if rank == 0:
        print(f"epoch MAE {epoch_mae.item():.3f} over {int(count.item())} processes")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
