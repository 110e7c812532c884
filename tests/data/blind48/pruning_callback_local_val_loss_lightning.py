# verify: hang,error
"""A pruning callback that raises on the validation loss this process logged, unsynchronised.

Modelled on https://github.com/optuna/optuna-examples/issues/101: under DDP, "whenever the prune
happens, the process throws out error and terminates"; the prune exception is not shared with
the other processes. Here `ThresholdPruning` reads `val_loss`, logged without `sync_dist`, so each
process sees the loss of its own validation shard; the shard with the noisy targets prunes, its
process leaves `trainer.fit`, and the other trains on into DDP's gradient all-reduce alone.
"""
import torch
import lightning.pytorch as pl
from torch.utils.data import DataLoader, TensorDataset


class TrialPruned(Exception):
    pass


class ThresholdPruning(pl.Callback):
    def __init__(self, upper):
        self.upper = upper

    def on_validation_end(self, trainer, pl_module):
        value = trainer.callback_metrics["val_loss"].item()
        if value > self.upper:
            raise TrialPruned(f"epoch {trainer.current_epoch}: val_loss {value:.2f}")  # expect: BCL011


class Regressor(pl.LightningModule):
    def __init__(self, lr):
        super().__init__()
        self.lr = lr
        self.net = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.net(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


def objective(lr):
    torch.manual_seed(0)
    train = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
    val_y = torch.zeros(16, 1)
    val_y[1::2] = 50.0
    val = TensorDataset(torch.randn(16, 4), val_y)
    trainer = pl.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=4, num_sanity_val_steps=0,
                         callbacks=[ThresholdPruning(upper=100.0)],
                         logger=False, enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False)
    trainer.fit(Regressor(lr), DataLoader(train, batch_size=4), DataLoader(val, batch_size=4))
    return trainer.callback_metrics["val_loss"].item()


if __name__ == "__main__":
    try:
        print("trial value", objective(0.05))
    except TrialPruned as exc:
        print("trial pruned:", exc)
