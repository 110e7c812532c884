# verify: ok nproc=1 nnodes=2
"""Hand fix: `prepare_data_per_node = True` (Lightning's default) where the data root is node-local.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/12159: Lightning runs
`prepare_data` on local rank 0 of every node, or, with `prepare_data_per_node=False`, on node 0's
local rank 0 only; which of the two is right depends on whether the nodes share a file system, and
the issue proposes to detect it because users set the flag wrong (data prepared on one node,
missing on the others).

Fixed by letting Lightning prepare the data once per node, which is what a node-local data root
needs: each node's local rank 0 writes the file on its own disk before any process's `setup`.
"""
import os
import shutil
import tempfile

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

BASE = os.path.join(
    tempfile.gettempdir(), f"blind40-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-pl"
)


class Regression(L.LightningDataModule):
    def __init__(self):
        super().__init__()
        self.prepare_data_per_node = True
        # each machine's own local disk (two simulated nodes share this host)
        self.root = os.path.join(BASE, f"node{os.environ['GROUP_RANK']}")

    def prepare_data(self):
        os.makedirs(self.root, exist_ok=True)
        g = torch.Generator().manual_seed(0)
        x = torch.randn(32, 4, generator=g)
        torch.save((x, x.sum(1, keepdim=True)), os.path.join(self.root, "train.pt"))

    def setup(self, stage):
        self.train_set = TensorDataset(*torch.load(os.path.join(self.root, "train.pt")))

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=4)


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    torch.manual_seed(0)
    trainer = L.Trainer(
        accelerator="cpu", devices=1, num_nodes=2, strategy="ddp", max_epochs=1,
        default_root_dir=os.path.join(BASE, "run"), logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False,
    )
    trainer.fit(Model(), datamodule=Regression())
    trainer.strategy.barrier()
    shutil.rmtree(BASE, ignore_errors=True)


if __name__ == "__main__":
    main()
