# verify: ok
"""Look-alike: a value logged only from batches with a positive row, but a plain tensor without `sync_dist`.

The same per-process validation shares (every positive row on the first process) and the same
`if positive.any(): self.log(...)`, but what is logged is the batch's positive rate as a tensor
with `sync_dist=False` (the default): Lightning averages it over the process's own steps, with no
collective, so a process that never logs it waits for nobody.
"""
import os

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

X = torch.linspace(-1, 1, 16).unsqueeze(1)
Y = torch.tensor([1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0])


class Detector(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(1, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.binary_cross_entropy_with_logits(self.net(x).squeeze(1), y.float())

    def validation_step(self, batch, batch_idx):
        x, y = batch
        preds = torch.sigmoid(self.net(x).squeeze(1))
        positive = y == 1
        if positive.any():
            self.log("val/pos_rate", (preds[positive] > 0.5).float().mean(), on_epoch=True)

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
