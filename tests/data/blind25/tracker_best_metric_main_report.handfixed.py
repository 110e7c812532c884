# verify: ok
"""Hand fix of tracker_best_metric_main_report: every rank asks for the best epoch, rank 0 prints it.

`tracker.best_metric(return_step=True)` runs on every rank, so the gathers inside each epoch's
first `compute()` have a partner; only the print stays on rank 0.
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
        best, best_epoch = tracker.best_metric(return_step=True)
        if rank == 0:
            print(f"epoch {epoch}: best val mse {best:.4f} at epoch {best_epoch}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
