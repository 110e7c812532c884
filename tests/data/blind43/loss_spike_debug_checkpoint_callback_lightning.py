# verify: hang,error
"""A callback keeps a debugging snapshot of the model whenever the training loss spikes (or turns
non-finite), before the spike's update is stepped away from. The loss it reads is this process's
own batch loss, so only the process whose sampler shard holds the bad record calls
`trainer.save_checkpoint`, which ends in a barrier.

Modelled on Lightning-AI/pytorch-lightning#9190
(https://github.com/Lightning-AI/pytorch-lightning/pull/9190), "tighten the checks for
`Trainer.terminate_on_nan`": a check of each step's loss for NaN/inf in the training loop.
"""
import os
import shutil
import tempfile

import lightning.pytorch as pl
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

SPIKE = 10.0
RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind43-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-run",
)


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


class SpikeSnapshot(pl.Callback):
    def __init__(self):
        self.best = float("inf")

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        loss = outputs["loss"].item()
        if not torch.isfinite(outputs["loss"]) or loss > SPIKE * self.best:
            print(f"batch {batch_idx}: loss {loss:.3g} spiked, saving a snapshot")
            trainer.save_checkpoint(os.path.join(RUN_DIR, f"spike-{trainer.global_step}.ckpt"))  # expect: BCL011
        self.best = min(self.best, loss)


def dataset():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 8, generator=g)
    y = x.sum(-1, keepdim=True)
    x[13] *= 1e4  # one unnormalised record
    return TensorDataset(x, y)


def main():
    torch.manual_seed(0)
    trainer = pl.Trainer(
        accelerator="cpu", strategy="ddp", devices=int(os.environ["WORLD_SIZE"]), max_epochs=1,
        gradient_clip_val=1.0, logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, default_root_dir=RUN_DIR, callbacks=[SpikeSnapshot()],
    )
    trainer.fit(Regressor(), DataLoader(dataset(), batch_size=4))
    trainer.strategy.barrier()
    shutil.rmtree(RUN_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
