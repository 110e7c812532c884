# verify: divergent check=LOGGED
"""Per-class losses logged with `sync_dist=True` under keys named after the classes in the batch.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/pull/21434 (fixing #21409, "silent
data corruption when ranks log different metric keys with sync_dist=True"): each `self.log(...,
sync_dist=True)` on step runs its own all-reduce, paired across ranks by call order, not by name.
Here each process trains on one image per step (batch size 1, as large images often force), so
whenever the shuffled sampler hands a cat to one process and a dog to the other, one logs
`train_loss/cat` and the other `train_loss/dog`; the two values are averaged together and each
process records the mix under its own key.
"""
import torch
from lightning.pytorch import LightningModule, Trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

CLASS_NAMES = ["cat", "dog"]
LOGGED = []


class Classifier(LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 2))

    def training_step(self, batch, batch_idx):
        x, y = batch
        losses = nn.functional.cross_entropy(self.net(x), y, reduction="none")
        for c in y.unique().tolist():
            self.log(f"train_loss/{CLASS_NAMES[c]}", losses[y == c].mean(), on_step=True, on_epoch=False, sync_dist=True)  # expect: BCL011
        return losses.mean()

    def on_train_end(self):
        LOGGED[:] = sorted((k, round(float(v), 5)) for k, v in self.trainer.callback_metrics.items())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def make_loader():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(24, 6, generator=g)
    y = torch.arange(24) % 2
    return DataLoader(TensorDataset(x, y), batch_size=1, shuffle=True)


def main():
    torch.manual_seed(0)
    trainer = Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        max_steps=6,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(Classifier(), make_loader())


if __name__ == "__main__":
    main()
