# verify: hang,error
"""Running evaluation metrics recomputed after every batch, with the update skipped for empty batches.

Modelled on https://github.com/h2oai/h2o-llmstudio/pull/141 ("Proper DDP Eval Progress"): the
evaluation shows a running metric per batch across processes. Here a torchmetrics
`MetricCollection` is updated only with the batch's valid targets (`if ok.any()`), then computed
for the progress line. `Metric.compute()` returns its cached value, without syncing, when no
`update()` came since the last compute; process 1's third batch is all sensor dropouts (NaN), so
it skips one sync that process 0 makes, and the later syncs pair up wrongly and one is left over.
"""
import torch
import torch.distributed as dist
from torchmetrics import MeanAbsoluteError, MeanSquaredError, MetricCollection

NAN = float("nan")


def sensor_batches(rank, world):
    g = torch.Generator().manual_seed(0)
    target = torch.rand(16, generator=g)
    target[[10, 11]] = NAN  # one dropout window: a whole batch of process 1's shard
    pred = target + 0.1 * torch.randn(16, generator=g)
    rows = torch.arange(16).view(8, 2)[rank::world]
    return [(pred[r], target[r]) for r in rows]


def evaluate(metrics, batches, rank):
    for step, (pred, target) in enumerate(batches):
        ok = ~torch.isnan(target)
        if ok.any():
            metrics.update(pred[ok], target[ok])
        running = metrics.compute()  # expect: BCL011
        if rank == 0:
            print(f"eval step {step}: mae {running['MeanAbsoluteError']:.4f}")
    return metrics.compute()


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    metrics = MetricCollection([MeanAbsoluteError(), MeanSquaredError()])
    final = evaluate(metrics, sensor_batches(rank, world), rank)
    if rank == 0:
        print({k: round(v.item(), 4) for k, v in final.items()})
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
