# verify: hang,error
"""The main process asks a torchmetrics MetricTracker for the best epoch, which computes every epoch.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/4529 (`if self.global_rank
== 0: out = self.metric.compute()` in DDP). Here the compute is one step removed: after each
epoch's validation only rank 0 reports `tracker.best_metric(return_step=True)`. That helper calls
`compute()` on the metric of every tracked epoch, and the first compute of a metric gathers its
states from every process (torchmetrics' `gather_all_tensors`, which opens with a barrier). Rank 0
waits in that barrier while rank 1 has moved on to the next epoch's DDP backward.
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
        if rank == 0:
            best, best_epoch = tracker.best_metric(return_step=True)  # expect: BCL011
            print(f"epoch {epoch}: best val mse {best:.4f} at epoch {best_epoch}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
