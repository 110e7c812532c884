# verify: ok
"""An evaluation helper returns early on a rejected batch, skipping a metric that never syncs.

Resembles eval_error_return_skips_metric_compute: one clip of process 1's shard carries a stray
label 2, `BinaryF1Score.update` raises there, and `evaluate` returns None without computing. But
the metric is built with `sync_on_compute=False`: each process reports the F1 of its own shard,
`compute()` runs no collective, and the processes stay in step (the next collective every process
reaches is the DDP gradient all-reduce of the next epoch).
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torchmetrics.classification import BinaryF1Score


def shard(rank, world, n, seed, stray=None):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    y = (x[:, 0] > 0).long()
    if stray is not None:
        y[stray] = 2  # a mislabelled clip
    return x[rank::world], y[rank::world]


def evaluate(model, x, y, metric):
    metric.reset()
    try:
        with torch.no_grad():
            for xb, yb in zip(x.split(4), y.split(4)):
                metric.update(model(xb).squeeze(-1).sigmoid(), yb)
    except RuntimeError as err:
        print(f"rank {dist.get_rank()}: evaluation skipped: {str(err)[:60]}")
        return None
    return metric.compute().item()


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(5, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = shard(rank, world, 32, seed=1)
    vx, vy = shard(rank, world, 16, seed=2, stray=7)
    f1 = BinaryF1Score(sync_on_compute=False)  # a per-shard figure, by design
    for epoch in range(2):
        for xb, yb in zip(x.split(4), y.split(4)):
            loss = F.binary_cross_entropy_with_logits(model(xb).squeeze(-1), yb.float())
            opt.zero_grad()
            loss.backward()
            opt.step()
        score = evaluate(model.module, vx, vy, f1)
        print(f"rank {rank} epoch {epoch}: f1 {score}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
