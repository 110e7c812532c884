# verify: ok
"""Hand fix of per_source_metric_update_called_guard: the guard reads the summed update counts.

The per-source update counts are all-reduced first; a source is computed (and synchronised) on
every process when any process saw it, so the `compute()` calls pair up.

Original docstring: per-source metrics computed only where `update_called`, to silence "compute
before update".

Modelled on Lightning-AI/torchmetrics#813 (https://github.com/Lightning-AI/torchmetrics/issues/813):
one of two metrics that batches are routed between is "not updated before compute is called"
and DDP hangs, and torchmetrics#1051 (https://github.com/Lightning-AI/torchmetrics/issues/1051):
the warning users then try to avoid.

The evaluation keeps one `MeanAbsoluteError` (synchronised on `compute()`) per data source and
reports only the sources this process saw: `if metric.update_called: metric.compute()`. The
evaluation shard of process 1 holds no "forum" rows, so it skips that metric's synchronisation
and its remaining ones pair with the wrong metrics of process 0.
"""
import warnings

import torch
import torch.distributed as dist
from torchmetrics import MeanAbsoluteError

SOURCES = ["news", "forum", "code"]
ROWS = ["news", "news", "forum", "code", "code", "news", "news", "code"]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    metrics = {src: MeanAbsoluteError(sync_on_compute=True) for src in SOURCES}
    g = torch.Generator().manual_seed(7)
    data = [(src, torch.randn(1, 3, generator=g)) for src in ROWS]
    with torch.no_grad():
        for src, x in data[rank::world]:
            metrics[src].update(model(x).squeeze(1), x.sum(1))
    seen = torch.tensor([float(metrics[src].update_count) for src in SOURCES])
    dist.all_reduce(seen)
    report = {}
    for (src, metric), count in zip(metrics.items(), seen.tolist()):
        if count > 0:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # this process may not have seen the source
                report[src] = metric.compute().item()
    rows = torch.tensor([float(len(data[rank::world]))])
    dist.all_reduce(rows)
    print(f"rank {rank}: {report} over {rows.item():.0f} rows")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
