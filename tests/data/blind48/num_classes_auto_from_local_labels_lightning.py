# verify: error
"""`num_classes: auto` in the config, filled by each process from the labels of its own shard.

Modelled on https://github.com/dongrunmin/RefDiff/issues/2: training ran on one GPU and failed on
two with "params[...] in this process with sizes [...] appears not to match ... process 0". Here
the data module fills `num_classes` in `setup()` from the labels this process reads; the rarest
class (4) appears only in the second process's shard, so the heads differ (4 against 5 outputs)
and DDP's parameter check at `trainer.fit` fails.
"""
import torch
import lightning.pytorch as pl
from torch.utils.data import DataLoader, TensorDataset

CONFIG = {"num_classes": "auto", "hidden": 8}
LABELS = [0, 1, 2, 3, 1, 2, 0, 3, 2, 4, 1, 0, 3, 2, 0, 1]


class ShardData(pl.LightningDataModule):
    def setup(self, stage):
        labels = torch.tensor(LABELS[self.trainer.global_rank::self.trainer.world_size])
        self.train = TensorDataset(torch.randn(len(labels), 4), labels)
        if CONFIG["num_classes"] == "auto":
            self.num_classes = int(labels.max()) + 1  # expect: BCL015

    def train_dataloader(self):
        return DataLoader(self.train, batch_size=4)


class Classifier(pl.LightningModule):
    def setup(self, stage):
        torch.manual_seed(0)
        self.body = torch.nn.Linear(4, CONFIG["hidden"])
        self.head = torch.nn.Linear(CONFIG["hidden"], self.trainer.datamodule.num_classes)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.head(torch.relu(self.body(x))), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


if __name__ == "__main__":
    trainer = pl.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=1, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                         use_distributed_sampler=False)
    trainer.fit(Classifier(), datamodule=ShardData())
