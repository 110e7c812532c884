# verify: hang
"""Per-domain validation losses logged with `self.log(..., sync_dist=True)` for the domains a rank saw.

Modelled on Lightning-AI/pytorch-lightning#19106
(https://github.com/Lightning-AI/pytorch-lightning/issues/19106), "Deadlock on `log_dict` with
different keys across ranks": each rank logs the keys its own batches produced, and the sync of
a key that only some ranks logged has no partner on the others. Here the validation set mixes
three domains; `validation_step` breaks the loss down per domain and logs one key per domain
present in the batch. The DistributedSampler gives rank 0 the even indices (news and code) and
rank 1 the odd ones (news only), so rank 0 logs `val_loss/code` and rank 1 never does: at the
end of the validation epoch rank 0 reduces one key more than rank 1 (measured: a hang inside
`trainer.fit`, rank 0 in a barrier and rank 1 in a broadcast).
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

    def training_step(self, batch, batch_idx):
        x, y, _ = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y, domain_ids = batch
        per_sample = (self.net(x) - y).pow(2).squeeze(1)
        for name, loss in self.per_domain(per_sample, domain_ids).items():
            self.log(f"val_loss/{name}", loss, sync_dist=True, batch_size=len(x))  # expect: BCL011

    @staticmethod
    def per_domain(per_sample: torch.Tensor, domain_ids: torch.Tensor) -> dict:
        losses = {}
        for index, name in enumerate(DOMAINS):
            mask = domain_ids == index
            if mask.any():
                losses[name] = per_sample[mask].mean()
        return losses

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
