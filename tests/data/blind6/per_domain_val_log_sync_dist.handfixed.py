# verify: ok
"""Hand-fixed twin of per_domain_val_log_sync_dist.py.

`validation_step` only accumulates per-domain sums and counts in fixed-size tensors (one slot
per known domain, zero where a batch has none). `on_validation_epoch_end` reduces both tensors
across ranks through the strategy, on every rank, and logs the domains whose global count is
non-zero: the same keys everywhere, already global, so without `sync_dist`
(Lightning-AI/pytorch-lightning#19106,
https://github.com/Lightning-AI/pytorch-lightning/issues/19106).
"""
import os
import tempfile
from dataclasses import dataclass, field

import lightning.pytorch as pl
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

DOMAINS = ("news", "code", "chat")


@dataclass
class RunConfig:
    features: int = 6
    batch_size: int = 2
    max_epochs: int = 2
    val_domains: list = field(
        default_factory=lambda: ["news", "news", "code", "news", "code", "news", "news", "news"]
    )


class DomainDataset(Dataset):
    def __init__(self, domains: list, features: int, seed: int):
        gen = torch.Generator().manual_seed(seed)
        self.x = torch.randn(len(domains), features, generator=gen)
        self.y = self.x.sum(dim=1, keepdim=True)
        self.domain_ids = torch.tensor([DOMAINS.index(d) for d in domains])

    def __len__(self):
        return len(self.domain_ids)

    def __getitem__(self, index):
        return self.x[index], self.y[index], self.domain_ids[index]


class Regressor(pl.LightningModule):
    def __init__(self, cfg: RunConfig):
        super().__init__()
        self.cfg = cfg
        self.net = nn.Sequential(nn.Linear(cfg.features, 16), nn.ReLU(), nn.Linear(16, 1))
        self.register_buffer("val_sum", torch.zeros(len(DOMAINS)), persistent=False)
        self.register_buffer("val_count", torch.zeros(len(DOMAINS)), persistent=False)

    def training_step(self, batch, batch_idx):
        x, y, _ = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y, domain_ids = batch
        per_sample = (self.net(x) - y).pow(2).squeeze(1)
        self.val_sum.index_add_(0, domain_ids, per_sample.detach())
        self.val_count.index_add_(0, domain_ids, torch.ones_like(per_sample))

    def on_validation_epoch_end(self):
        total = self.trainer.strategy.reduce(self.val_sum.clone(), reduce_op="sum")
        count = self.trainer.strategy.reduce(self.val_count.clone(), reduce_op="sum")
        for index, name in enumerate(DOMAINS):
            if count[index] > 0:
                self.log(f"val_loss/{name}", total[index] / count[index])
        self.val_sum.zero_()
        self.val_count.zero_()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    cfg = RunConfig()
    train = DomainDataset(["news", "code", "chat", "news"] * 4, cfg.features, seed=0)
    val = DomainDataset(cfg.val_domains, cfg.features, seed=1)
    job = f"{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}"
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        max_epochs=cfg.max_epochs,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        default_root_dir=os.path.join(tempfile.gettempdir(), f"blind6-domains-{job}"),
    )
    trainer.fit(
        Regressor(cfg),
        train_dataloaders=DataLoader(train, batch_size=cfg.batch_size, shuffle=True),
        val_dataloaders=DataLoader(val, batch_size=cfg.batch_size),
    )


if __name__ == "__main__":
    main()
