# verify: ok
"""Hand-fixed: only the update waits for a positive row; the metric object is logged from every
validation step, so Lightning computes it (and synchronises its states) on every process at the end
of the epoch.
"""
import os

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics.classification import BinaryRecall

X = torch.linspace(-1, 1, 16).unsqueeze(1)
Y = torch.tensor([1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0])


class Detector(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(1, 1)
        self.pos_recall = BinaryRecall()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.binary_cross_entropy_with_logits(self.net(x).squeeze(1), y.float())

    def validation_step(self, batch, batch_idx):
        x, y = batch
        preds = torch.sigmoid(self.net(x).squeeze(1))
        positive = y == 1
        if positive.any():
            self.pos_recall.update(preds[positive], y[positive])
        self.log("val/pos_recall", self.pos_recall, on_epoch=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    torch.manual_seed(0)
    data = TensorDataset(X, Y)
    trainer = L.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=1, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
        num_sanity_val_steps=0,
    )
    trainer.fit(Detector(), DataLoader(data, batch_size=2), DataLoader(data, batch_size=2))


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
