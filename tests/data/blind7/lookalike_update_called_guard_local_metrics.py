# verify: ok
"""Look-alike of per_source_metric_update_called_guard: the same `update_called` guard.

The per-source metrics are built with `sync_on_compute=False`: each process reports the sources
it saw from its own rows, `compute()` is local, and the guard may differ between processes. The
only collective, the row count, is reached by every process.
"""
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
    metrics = {src: MeanAbsoluteError(sync_on_compute=False) for src in SOURCES}
    g = torch.Generator().manual_seed(7)
    data = [(src, torch.randn(1, 3, generator=g)) for src in ROWS]
    with torch.no_grad():
        for src, x in data[rank::world]:
            metrics[src].update(model(x).squeeze(1), x.sum(1))
    report = {}
    for src, metric in metrics.items():
        if metric.update_called:
            report[src] = metric.compute().item()
    rows = torch.tensor([float(len(data[rank::world]))])
    dist.all_reduce(rows)
    print(f"rank {rank}: {report} over {rows.item():.0f} rows")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
