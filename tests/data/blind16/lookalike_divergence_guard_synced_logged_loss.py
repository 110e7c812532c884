# verify: ok
"""Look-alike: a divergence guard that reads the loss logged with `sync_dist=True`.

Like `divergence_guard_callback_local_should_stop`, `DivergenceGuard.on_train_batch_end` sets
`trainer.should_stop` when the loss passes a limit, and row 5's corrupt target falls in process
1's second batch; but the guard reads `trainer.callback_metrics["train_loss"]`, logged at every
step with `sync_dist=True` (averaged over the processes when it is logged), so every process
sees the same value and stops after the same batch.
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
        loss = nn.functional.mse_loss(self.lin(x), y)
        self.log("train_loss", loss, on_step=True, on_epoch=False, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)

    def train_dataloader(self):
        data = rows()
        return DataLoader(data, batch_size=2, sampler=DistributedSampler(data, shuffle=False))


class DivergenceGuard(L.Callback):
    def __init__(self, limit):
        self.limit = limit

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        loss = trainer.callback_metrics["train_loss"]
        if not torch.isfinite(loss) or loss > self.limit:
            print(f"rank {trainer.global_rank}: loss {loss.item():.1f} diverged at batch {batch_idx}")
            trainer.should_stop = True


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
