# verify: ok
"""Look-alike of `loss_spike_debug_checkpoint_callback_lightning`: a metric logged without
`sync_dist` is NaN on the process whose sampler shard holds the bad record, and a callback stops
the training on it (`EarlyStopping(check_finite=True)`), but EarlyStopping combines the processes'
decisions with `reduce_boolean_decision`, so both stop at the same epoch.
"""
import os
import shutil
import tempfile

import lightning.pytorch as pl
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import EarlyStopping
from torch.utils.data import DataLoader, TensorDataset

RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind43-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-early",
)


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        err = (self.net(torch.nan_to_num(x)) - y).pow(2).squeeze(-1)
        self.log("train_mse", err.mean(), on_step=False, on_epoch=True)  # NaN where y is NaN
        return err.nanmean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


def dataset():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 8, generator=g)
    y = x.sum(-1, keepdim=True)
    y[13] = float("nan")  # one record with a missing target
    return TensorDataset(x, y)


def main():
    torch.manual_seed(0)
    stopper = EarlyStopping(monitor="train_mse", check_finite=True, check_on_train_epoch_end=True, patience=10)
    trainer = pl.Trainer(
        accelerator="cpu", strategy="ddp", devices=int(os.environ["WORLD_SIZE"]), max_epochs=4,
        logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, default_root_dir=RUN_DIR, callbacks=[stopper],
    )
    trainer.fit(Regressor(), DataLoader(dataset(), batch_size=4))
    print("stopped at epoch", trainer.current_epoch, stopper.stopping_reason_message)
    trainer.strategy.barrier()
    shutil.rmtree(RUN_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
