# verify: hang
"""A Lightning callback that stops training when the process's own batch loss diverges.

Modelled on Lightning-AI/pytorch-lightning#6232 ("Adds more early stopping options": stopping on a
divergence threshold or a time limit, and the warning that users "get stung by complicating bugs
determining when stopping should occur across multiple processes"): `DivergenceGuard` reads the
loss Lightning hands `on_train_batch_end` (the process's own batch) and sets
`trainer.should_stop`; Lightning's epoch loop checks the flag after every batch without
synchronising it. Row 5 has a corrupt target and falls in process 1's second batch.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

LIMIT = 1_000.0


def rows():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 4, generator=g)
    y = x.sum(1, keepdim=True)
    y[5] = 1e4
    return TensorDataset(x, y)


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.lin(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)

    def train_dataloader(self):
        data = rows()
        return DataLoader(data, batch_size=2, sampler=DistributedSampler(data, shuffle=False))


class DivergenceGuard(L.Callback):
    def __init__(self, limit):
        self.limit = limit

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        loss = outputs["loss"].detach()
        if not torch.isfinite(loss) or loss > self.limit:
            print(f"rank {trainer.global_rank}: loss {loss.item():.1f} diverged at batch {batch_idx}")
            trainer.should_stop = True  # expect: BCL011


def main():
    trainer = L.Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        max_epochs=2,
        callbacks=[DivergenceGuard(LIMIT)],
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
    )
    trainer.fit(Regressor())


if __name__ == "__main__":
    main()
