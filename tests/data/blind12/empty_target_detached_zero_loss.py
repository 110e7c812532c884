# verify: hang
"""A batch without ground truth returns a fresh zero loss, detached from the model, from
`training_step`.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/12190 (DDP training hangs when
one GPU returns `torch.tensor([0.0], requires_grad=True)` for a batch without ground truth) and
https://github.com/Lightning-AI/pytorch-lightning/issues/5243 (skipping a step on one process
freezes DDP). The distributed sampler deals the rows out alternately; rows 1 and 3 have no box, so
process 1's first batch has none. Its backward through the Trainer reaches no parameter, DDP's
gradient all-reduce never starts there, and process 0's waits for it.
"""
import torch
import lightning.pytorch as pl
from torch.utils.data import DataLoader, TensorDataset

NO_BOX = -1


def rows(n=16):
    x = torch.randn(n, 4, generator=torch.Generator().manual_seed(0))
    y = torch.arange(n) % 3
    y[[1, 3]] = NO_BOX
    return TensorDataset(x, y)


class Detector(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 3)

    def training_step(self, batch, batch_idx):
        x, y = batch
        keep = y != NO_BOX
        if not keep.any():
            return torch.tensor(0.0, requires_grad=True)  # expect: BCL011
        return torch.nn.functional.cross_entropy(self.net(x[keep]), y[keep])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    trainer = pl.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=1, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
    )
    trainer.fit(Detector(), DataLoader(rows(), batch_size=2))


if __name__ == "__main__":
    main()
