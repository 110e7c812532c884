# verify: hang
"""Test-set metrics computed by the main process alone with a syncing MetricCollection.

Modelled on Lightning-AI/torchmetrics#938 (https://github.com/Lightning-AI/torchmetrics/issues/938):
training runs under plain `DistributedDataParallel`, but the test pass runs only where
`args.local_rank in (-1, 0)` (the usual "evaluate on the main process" guard). The
`MetricCollection` was built with the defaults, so `compute()` synchronises its states across
the process group (`sync_on_compute=True`): the main process waits in torchmetrics' all-gather
while the other process has gone on to the final barrier.
"""
import argparse
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from torchmetrics import MetricCollection
from torchmetrics.classification import MulticlassAccuracy, MulticlassF1Score


@dataclass
class Config:
    classes: int = 4
    features: int = 10
    train_rows: int = 64
    test_rows: int = 24
    epochs: int = 2
    lr: float = 0.1


def make_split(rows: int, cfg: Config, seed: int) -> TensorDataset:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cfg.features, generator=g)
    y = x[:, : cfg.classes].argmax(dim=1)
    return TensorDataset(x, y)


def train(model: DDP, loader: DataLoader, cfg: Config) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    for epoch in range(cfg.epochs):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()


@torch.no_grad()
def test(model: DDP, loader: DataLoader, metrics: MetricCollection) -> dict:
    model.eval()
    for x, y in loader:
        metrics.update(model(x), y)
    return {k: float(v) for k, v in metrics.compute().items()}  # expect: BCL011


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", -1)))
    args = parser.parse_args()
    cfg = Config()
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(cfg.features, cfg.classes), broadcast_buffers=False)
    train_set = make_split(cfg.train_rows, cfg, seed=1)
    train_loader = DataLoader(train_set, batch_size=8, sampler=DistributedSampler(train_set))
    train(model, train_loader, cfg)

    metrics = MetricCollection(
        {"acc": MulticlassAccuracy(num_classes=cfg.classes), "f1": MulticlassF1Score(num_classes=cfg.classes)}
    )
    if args.local_rank in (-1, 0):
        test_loader = DataLoader(make_split(cfg.test_rows, cfg, seed=2), batch_size=8)
        print("test:", test(model, test_loader, metrics), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
