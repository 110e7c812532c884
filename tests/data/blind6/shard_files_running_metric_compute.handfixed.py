# verify: ok
"""Hand-fixed twin of shard_files_running_metric_compute.py.

The running value printed inside the loop comes from a second metric built with
`sync_on_compute=False`, which computes from this process's own state and communicates nothing
(what Project-MONAI/MONAI#5357, https://github.com/Project-MONAI/MONAI/issues/5357, asks for:
intermediate feedback without the all-gather). The synced metric is computed once, after the
loop, on every process, whatever the number of batches each one read.
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
        self.local_metric = MeanSquaredError(sync_on_compute=False)

    def run(self, loader: DataLoader) -> float:
        self.model.eval()
        with torch.no_grad():
            for step, (x, y) in enumerate(loader, start=1):
                preds = self.model(x).squeeze(1)
                self.metric.update(preds, y)
                self.local_metric.update(preds, y)
                if step % self.cfg.log_every == 0:
                    running = self.local_metric.compute()
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
