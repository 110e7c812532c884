# verify: ok
"""Hand fix: every process gathers the predictions; only the real experiment writer writes them.

Modelled on https://github.com/facebookresearch/ReAgent/pull/642 ("logger.experiment is only
available on rank 0"): by convention a logger's `experiment` exists on global rank 0 only. Lightning's
loggers wrap the property in `@rank_zero_experiment`, which hands every other process a
`_DummyExperiment` whose methods do nothing. The module below writes a summary of all processes'
predictions when `self.logger.experiment` is a CSV `ExperimentWriter`, and gathers the predictions
inside that check: rank 0 enters `self.all_gather`, rank 1 (holding the dummy) skips it and goes on
to the next training epoch.
"""
import os
import shutil
import tempfile

import torch
from lightning.pytorch import LightningModule, Trainer
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.loggers.csv_logs import ExperimentWriter
from torch.utils.data import DataLoader, TensorDataset

RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind36-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-csv",
)


class Regressor(LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)
        self.val_preds = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.val_preds.append(self.layer(x).detach())

    def on_validation_epoch_end(self):
        writer = self.logger.experiment
        preds = self.all_gather(torch.cat(self.val_preds))
        if isinstance(writer, ExperimentWriter):
            writer.log_metrics({"val_pred_mean": preds.mean().item()}, step=self.current_epoch)
            writer.save()
        self.val_preds.clear()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def loader():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(32, 4, generator=gen)
    return DataLoader(TensorDataset(x, x.sum(dim=1, keepdim=True)), batch_size=4)


def main():
    torch.manual_seed(0)
    trainer = Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        max_epochs=3,
        logger=CSVLogger(RUN_DIR),
        enable_progress_bar=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
    )
    trainer.fit(Regressor(), loader(), loader())
    trainer.strategy.barrier()
    if trainer.is_global_zero:
        shutil.rmtree(RUN_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
