# verify: hang
"""`on_validation_epoch_end` returns early when the process kept no outputs, before `self.all_gather`.

Modelled on Lightning-AI/pytorch-lightning#19783 (https://github.com/Lightning-AI/pytorch-lightning/issues/19783):
"DDP strategy doesn't work for on_validation_epoch_end, always hang", outputs appended in
`validation_step` and combined in `on_validation_epoch_end`. Here only rows with a reference
embedding are kept, and the epoch-end hook skips the gather "when there is nothing to score".
The validation rows are dealt out by the distributed sampler; every row with a reference falls
to the first process, so the second one returns before `self.all_gather`.
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
        if not self.kept:
            return
        norms = torch.cat(self.kept)
        self.kept.clear()
        everyone = self.all_gather(norms.mean())  # expect: BCL005
        if self.trainer.is_global_zero:
            print(f"mean reference norm {everyone.mean().item():.3f}")

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
