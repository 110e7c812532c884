# verify: ok
"""Look-alike of tracker_best_metric_main_report: rank 0 alone asks for the best epoch, from caches.

The same `tracker.best_metric(return_step=True)` on rank 0 only, but every rank first computes the
current epoch's metric with `tracker.compute()` (the value every rank logs). A torchmetrics metric
keeps its computed value until its next update, and the tracker never updates a past epoch's
metric, so rank 0's `best_metric` reads cached values and runs no collective.
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torchmetrics import MeanSquaredError
from torchmetrics.wrappers import MetricTracker

EPOCHS = 3


def shard(rank: int, n: int, seed: int):
    g = torch.Generator().manual_seed(seed + rank)
    x = torch.randn(n, 3, generator=g)
    return x, x @ torch.tensor([[2.0], [-1.0], [0.5]])


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(3, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    tracker = MetricTracker(MeanSquaredError(), maximize=False)
    train_x, train_y = shard(rank, 16, 10)
    val_x, val_y = shard(rank, 8, 20)
    for epoch in range(EPOCHS):
        for i in range(0, 16, 4):
            loss = torch.nn.functional.mse_loss(model(train_x[i : i + 4]), train_y[i : i + 4])
            opt.zero_grad()
            loss.backward()
            opt.step()
        tracker.increment()
        with torch.no_grad():
            for i in range(0, 8, 4):
                tracker.update(model(val_x[i : i + 4]), val_y[i : i + 4])
        val_mse = tracker.compute()
        print(f"rank {rank} epoch {epoch}: val mse {val_mse:.4f}", flush=True)
        if rank == 0:
            best, best_epoch = tracker.best_metric(return_step=True)
            print(f"epoch {epoch}: best val mse {best:.4f} at epoch {best_epoch}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
