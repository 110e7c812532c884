# verify: error
"""The classifier's width comes from the label set of the process's own share of the data.

Shape of huggingface/accelerate#1481 (https://github.com/huggingface/accelerate/issues/1481) and
pytorch/pytorch#73547 (https://github.com/pytorch/pytorch/issues/73547): "DDP expects same model
across all ranks" when the processes build models of different shapes. Here
`ShardedLabels.setup` deals the records `RECORDS[rank::world]` and keeps the labels it sees;
`Classifier.configure_model` sizes the head with them (3 labels on rank 0, 2 on rank 1), and the
DDP wrapper that `trainer.fit` builds compares the parameter shapes of the processes.
"""
import os

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

RECORDS = [
    ([0.1, 0.2, 0.3, 0.4], "cat"), ([0.5, 0.1, 0.0, 0.2], "dog"),
    ([0.3, 0.3, 0.1, 0.0], "owl"), ([0.2, 0.4, 0.4, 0.1], "cat"),
    ([0.9, 0.1, 0.2, 0.3], "dog"), ([0.0, 0.6, 0.2, 0.1], "dog"),
    ([0.4, 0.4, 0.0, 0.5], "cat"), ([0.7, 0.2, 0.6, 0.1], "cat"),
]


class ShardedLabels(L.LightningDataModule):
    def setup(self, stage):
        rank, world = self.trainer.global_rank, self.trainer.world_size
        self.rows = RECORDS[rank::world]
        self.classes = sorted({label for _, label in self.rows})

    def train_dataloader(self):
        x = torch.tensor([feats for feats, _ in self.rows])
        y = torch.tensor([self.classes.index(label) for _, label in self.rows])
        return DataLoader(TensorDataset(x, y), batch_size=2)


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.head = None

    def configure_model(self):
        if self.head is None:
            self.head = torch.nn.Linear(4, len(self.trainer.datamodule.classes))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.head(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    trainer = L.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=1, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
        use_distributed_sampler=False,
    )
    trainer.fit(Classifier(), datamodule=ShardedLabels())  # expect: BCL007


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
