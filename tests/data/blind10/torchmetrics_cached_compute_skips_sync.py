# verify: error
"""A torchmetrics metric read at every log step, whose compute() returns its cache without syncing.

Modelled on Lightning-AI/torchmetrics#1841 (https://github.com/Lightning-AI/torchmetrics/issues/1841)
(the role of `self._computed`) and Lightning-AI/pytorch-lightning#5737
(https://github.com/Lightning-AI/pytorch-lightning/issues/5737) with its docs PR #5899
(https://github.com/Lightning-AI/pytorch-lightning/pull/5899): `Metric.compute()` caches its result
and returns the cache, without syncing the states, until the next `update()`. Every process calls
`compute()` at each log step, but updates only with the rows it could score (rows with a target).
Rank 1's share between two log steps has no scored rows, so there its compute() is the cache, while
rank 0 all-gathers.
"""
import torch
import torch.distributed as dist
from torchmetrics.regression import MeanSquaredError

NAN = float("nan")
# (prediction, target) rows; dealt ROWS[rank::world], two rows per step; NaN target: not scored
ROWS = [
    (0.5, 0.4), (0.1, 0.3), (0.9, 1.0), (0.2, 0.1),
    (0.3, 0.3), (0.7, NAN), (0.4, 0.6), (0.8, NAN),
    (0.6, 0.5), (0.2, 0.2), (0.1, 0.0), (0.5, 0.4),
]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    mine = torch.tensor(ROWS[rank::world])
    mse = MeanSquaredError()
    for step, chunk in enumerate(mine.split(2)):
        preds, target = chunk[:, 0], chunk[:, 1]
        scored = ~torch.isnan(target)
        if scored.any():
            mse.update(preds[scored], target[scored])
        value = mse.compute()  # expect: BCL011
        if rank == 0:
            print(f"step {step} running mse {value.item():.4f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
