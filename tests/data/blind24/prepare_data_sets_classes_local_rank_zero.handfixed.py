# verify: ok
"""Hand fix: `prepare_data` only writes the cache; `setup`, which every process runs, sets the classes.

Modelled on Lightning-AI/pytorch-lightning#11220
(https://github.com/Lightning-AI/pytorch-lightning/issues/11220): attributes assigned in
`prepare_data` were missing in `setup` on the other GPUs under DDP (Lightning calls `prepare_data`
on each node's local rank 0 only; the other processes wait at a barrier). Here the data module starts
from a binary default, `prepare_data` writes the cache and replaces the classes with the three
read from the label file, and `configure_model` sizes the head from them: 3 outputs on process 0,
2 on process 1, and DDP's constructor refuses parameters of different shapes.
"""
import csv
import os
import tempfile

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
import lightning as L

RUN = f"blind24-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-labels"
RAW = [(i, ["cat", "dog", "bird"][i % 3]) for i in range(24)]


class PetsData(L.LightningDataModule):
    def __init__(self, root):
        super().__init__()
        self.root = root
        self.classes = ["negative", "positive"]

    def prepare_data(self):
        os.makedirs(self.root, exist_ok=True)
        with open(os.path.join(self.root, "rows.csv"), "w", newline="") as f:
            csv.writer(f).writerows(RAW)

    def setup(self, stage):
        with open(os.path.join(self.root, "rows.csv"), newline="") as f:
            rows = [(int(i), label) for i, label in csv.reader(f)]
        self.classes = sorted({label for _, label in rows})
        index = {c: k for k, c in enumerate(self.classes)}
        x = torch.tensor([[i / 24.0, (i % 5) / 5.0] for i, _ in rows])
        y = torch.tensor([index[label] for _, label in rows])
        self.train_set = TensorDataset(x, y)

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=4)


class Classifier(L.LightningModule):
    def configure_model(self):
        torch.manual_seed(0)
        self.head = nn.Linear(2, len(self.trainer.datamodule.classes))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.head(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    data = PetsData(os.path.join(tempfile.gettempdir(), RUN))
    trainer = L.Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        max_epochs=1,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
    )
    trainer.fit(Classifier(), datamodule=data)


if __name__ == "__main__":
    main()
