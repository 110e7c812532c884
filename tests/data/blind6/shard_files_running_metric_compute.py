# verify: error
"""A running torchmetrics value printed during evaluation, over shard files of different sizes.

Modelled on Project-MONAI/MONAI#5357 (https://github.com/Project-MONAI/MONAI/issues/5357): a
metric's aggregate (an all-gather) called inside the evaluation loop "to print the intermediate
result" freezes when the ranks run a different number of iterations; and on
Lightning-AI/torchmetrics#2170 (https://github.com/Lightning-AI/torchmetrics/issues/2170) for
uneven per-rank metric states. Here evaluation streams records from shard files, assigned to the
ranks round-robin by file (`files[rank::world]`, as webdataset-style loaders do). The last shard
is short, so rank 0 reads 12 records (3 batches) and rank 1 8 (2 batches). `Evaluator.run()`
prints the running error after every batch with `metric.compute()`, which syncs the metric state
across processes (torchmetrics' default `sync_on_compute=True`, a barrier and all-gathers):
rank 0's third call has no partner. Rank 1's final `compute()` returns its cached value without
syncing (no `update()` since the last one), so rank 1 finishes and tears the group down while
rank 0 waits in the barrier of its third sync.
"""
import glob
import json
import os
import tempfile
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, IterableDataset
from torchmetrics import MeanSquaredError

SHARD_SIZES = (6, 6, 6, 2)


@dataclass
class EvalConfig:
    features: int = 5
    batch_size: int = 4
    log_every: int = 1


def shared_dir() -> str:
    job = f"{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}"
    return os.path.join(tempfile.gettempdir(), f"blind6-shards-{job}")


def write_shards(directory: str, cfg: EvalConfig) -> None:
    os.makedirs(directory, exist_ok=True)
    gen = torch.Generator().manual_seed(0)
    for index, size in enumerate(SHARD_SIZES):
        x = torch.randn(size, cfg.features, generator=gen)
        records = [{"x": row.tolist(), "y": float(row.sum())} for row in x]
        with open(os.path.join(directory, f"shard-{index:05d}.jsonl"), "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in records)


class ShardStream(IterableDataset):
    def __init__(self, files: list):
        self.files = files

    def __iter__(self):
        for path in self.files:
            with open(path) as f:
                for line in f:
                    record = json.loads(line)
                    yield torch.tensor(record["x"]), torch.tensor(record["y"])


class Evaluator:
    def __init__(self, model: nn.Module, cfg: EvalConfig):
        self.model = model
        self.cfg = cfg
        self.metric = MeanSquaredError()

    def run(self, loader: DataLoader) -> float:
        self.model.eval()
        with torch.no_grad():
            for step, (x, y) in enumerate(loader, start=1):
                self.metric.update(self.model(x).squeeze(1), y)
                if step % self.cfg.log_every == 0:
                    running = self.metric.compute()  # expect: BCL011
                    print(f"[rank {dist.get_rank()}] step {step}: running mse {running:.4f}")
        return float(self.metric.compute())


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    cfg = EvalConfig()
    directory = shared_dir()
    if rank == 0:
        write_shards(directory, cfg)
    dist.barrier()
    files = sorted(glob.glob(os.path.join(directory, "shard-*.jsonl")))[rank::world]
    loader = DataLoader(ShardStream(files), batch_size=cfg.batch_size)
    torch.manual_seed(0)
    model = nn.Linear(cfg.features, 1)
    mse = Evaluator(model, cfg).run(loader)
    if rank == 0:
        print(f"eval mse {mse:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
