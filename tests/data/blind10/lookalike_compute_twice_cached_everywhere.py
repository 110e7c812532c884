# verify: ok
"""Look-alike of torchmetrics_cached_compute_skips_sync: a second compute() that returns the cache.

Every process updates with its scored rows and calls `compute()` once at the end (it syncs); the
report then calls `compute()` again for a second format. No update happened in between on any
process, so every process returns the cache there and none syncs: the calls still pair up.
"""
import torch
import torch.distributed as dist
from torchmetrics.regression import MeanSquaredError

NAN = float("nan")
ROWS = [
    (0.5, 0.4), (0.1, 0.3), (0.9, 1.0), (0.2, 0.1),
    (0.3, 0.3), (0.7, NAN), (0.4, 0.6), (0.8, NAN),
]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    mine = torch.tensor(ROWS[rank::world])
    mse = MeanSquaredError()
    for chunk in mine.split(2):
        preds, target = chunk[:, 0], chunk[:, 1]
        scored = ~torch.isnan(target)
        if scored.any():
            mse.update(preds[scored], target[scored])
    value = mse.compute()
    rmse = mse.compute().sqrt()
    if rank == 0:
        print(f"mse {value.item():.4f} rmse {rmse.item():.4f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
