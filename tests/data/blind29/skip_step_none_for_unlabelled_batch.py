# verify: error,hang
"""A LightningModule skips a batch whose tokens are all unlabelled by returning None.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/pull/19918 (returning None from
`training_step` to skip a batch: fine on one device, but in distributed training the ranks decide
differently and get out of step; Lightning now raises on the rank that skips). Here the labels of
rows 9 and 11 are still being annotated (-100). The unshuffled DistributedSampler gives every odd
row to process 1, so its third batch holds only unlabelled rows and its `training_step` returns
None, while process 0 trains on that step.
"""
from datetime import timedelta

import lightning.pytorch as pl
import torch
import torch.nn.functional as F
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

IGNORE = -100


def make_rows():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 6, generator=g)
    y = torch.randint(0, 3, (16,), generator=g)
    y[[9, 11]] = IGNORE  # not annotated yet
    return TensorDataset(x, y)


class Tagger(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(6, 3)

    def training_step(self, batch, batch_idx):
        x, y = batch
        labelled = y != IGNORE
        if not labelled.any():
            return None  # expect: BCL011
        logits = self.head(x)
        return F.cross_entropy(logits[labelled], y[labelled])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    torch.manual_seed(0)
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=2,
        strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=20)),
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        use_distributed_sampler=False,
    )
    rows = make_rows()
    sampler = DistributedSampler(rows, trainer.world_size, trainer.global_rank, shuffle=False)
    loader = DataLoader(rows, batch_size=2, sampler=sampler)
    model = Tagger()
    trainer.fit(model, loader)
    print(f"rank {trainer.global_rank}: weight sum {model.head.weight.sum().item():.4f}")


if __name__ == "__main__":
    main()
