# verify: ok
"""Hand-fixed: every process gathers a (sum, count) pair, zeros where it kept nothing; the mean is
taken from the gathered sums and counts, so no process skips `self.all_gather`.
"""
import os

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

X = torch.linspace(-1, 1, 12).unsqueeze(1).repeat(1, 3)
HAS_REF = torch.tensor([1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0])


class Embedder(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(3, 2)
        self.kept = []

    def training_step(self, batch, batch_idx):
        x, _ = batch
        return self.net(x).pow(2).mean()

    def validation_step(self, batch, batch_idx):
        x, has_ref = batch
        if has_ref.any():
            self.kept.append(self.net(x[has_ref == 1]).norm(dim=1))

    def on_validation_epoch_end(self):
        norms = torch.cat(self.kept) if self.kept else torch.zeros(0)
        self.kept.clear()
        everyone = self.all_gather(torch.stack([norms.sum(), torch.tensor(float(norms.numel()))]))
        if self.trainer.is_global_zero and everyone[:, 1].sum() > 0:
            print(f"mean reference norm {(everyone[:, 0].sum() / everyone[:, 1].sum()).item():.3f}")

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    torch.manual_seed(0)
    data = TensorDataset(X, HAS_REF)
    trainer = L.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=2, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
        num_sanity_val_steps=0,
    )
    trainer.fit(Embedder(), DataLoader(data, batch_size=2), DataLoader(data, batch_size=2))


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
