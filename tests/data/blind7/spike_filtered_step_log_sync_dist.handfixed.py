# verify: ok
"""Hand fix of spike_filtered_step_log_sync_dist: the spike test reads the reduced loss.

Every rank reduces its loss through the strategy first; the spike test and the `self.log`
(without `sync_dist`, the value is already the mean) then see the same number everywhere.

Original docstring: per-step training loss logged with `sync_dist=True` only when this rank's
loss is no spike.

Modelled on Lightning-AI/pytorch-lightning#19917
(https://github.com/Lightning-AI/pytorch-lightning/pull/19917): "A user logged keys
inconsistently across ranks, leading to hangs at the reduction", and ecmwf/WeatherGenerator#2724
(https://github.com/ecmwf/WeatherGenerator/issues/2724): a loss-spike check on "rank-local"
losses.

`training_step` keeps spikes out of the loss chart: `if loss < spike_limit: self.log(...,
on_step=True, sync_dist=True)`. A step-level log with `sync_dist` reduces the value across the
processes right away. Samples 5 and 7 carry corrupt targets; the sampler gives both to rank 1's
second batch, whose loss is a spike there only, so rank 1 skips the reduction rank 0 makes.
"""
import torch
import torch.nn.functional as F
from lightning.pytorch import LightningModule, Trainer
from torch.utils.data import DataLoader, TensorDataset


def make_data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 4, generator=g)
    y = x.sum(1, keepdim=True)
    y[5] = y[7] = 1e3  # corrupt rows
    return TensorDataset(x, y)


class Regressor(LightningModule):
    def __init__(self, spike_limit=50.0):
        super().__init__()
        self.save_hyperparameters()
        self.net = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        mean_loss = self.trainer.strategy.reduce(loss.detach(), reduce_op="mean")
        if mean_loss < self.hparams.spike_limit:
            self.log("train/loss", mean_loss, on_step=True, on_epoch=False)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=1e-4)


def main():
    torch.manual_seed(0)
    trainer = Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=1, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
    )
    trainer.fit(Regressor(), DataLoader(make_data(), batch_size=2))


if __name__ == "__main__":
    main()
