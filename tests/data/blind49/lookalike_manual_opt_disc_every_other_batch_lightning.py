# verify: ok
"""Look-alike: a manual-optimization GAN that updates the discriminator only on some batches.

The discriminator's `manual_backward` sits under an `if`, as in the suspended-optimizer shape, but
the condition is `batch_idx % 2 == 0`: the `DistributedSampler` gives every process the same number
of batches, so every process takes the same branch at every step. Each process's local
discriminator loss is only printed.
"""
import os
import shutil
import tempfile

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

ROOT = os.path.join(tempfile.gettempdir(), "blind49-{}-{}-alt".format(
    os.environ.get("MASTER_ADDR", "x"), os.environ.get("MASTER_PORT", "0")))


class GAN(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.gen = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
        self.disc = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        self.bce = nn.BCEWithLogitsLoss()

    def training_step(self, batch, batch_idx):
        opt_g, opt_d = self.optimizers()
        (real,) = batch
        fake = self.gen(torch.randn(real.size(0), 2))
        if batch_idx % 2 == 0:
            r, f = self.disc(real), self.disc(fake.detach())
            d_loss = self.bce(r, torch.ones_like(r)) + self.bce(f, torch.zeros_like(f))
            print("local d_loss", round(d_loss.item(), 3), flush=True)
            opt_d.zero_grad()
            self.manual_backward(d_loss)
            opt_d.step()
        g = self.disc(fake)
        opt_g.zero_grad()
        self.manual_backward(self.bce(g, torch.ones_like(g)))
        opt_g.step()

    def configure_optimizers(self):
        return (torch.optim.Adam(self.gen.parameters(), 1e-2),
                torch.optim.Adam(self.disc.parameters(), 1e-2))


def main():
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(128, 4) * torch.rand(128, 1) * 6 + 1.0)
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp_find_unused_parameters_true",
                        max_epochs=1, default_root_dir=ROOT, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(GAN(), DataLoader(data, batch_size=8))
    shutil.rmtree(ROOT, ignore_errors=True)


if __name__ == "__main__":
    main()
