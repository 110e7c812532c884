# verify: hang,error
"""Suspending the discriminator's optimizer while it is too strong, in a manual-optimization GAN.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/7198: a GAN whose
discriminator (or generator) becomes too good should have its optimizer suspended until the other
catches up; the answer is manual optimization. Under DDP, `training_step` tests the discriminator
loss of this process's batch, so one process runs `manual_backward(d_loss)` (DDP's gradient
all-reduce) and the other skips it.
"""
import os
import shutil
import tempfile

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

ROOT = os.path.join(tempfile.gettempdir(), "blind49-{}-{}-gan".format(
    os.environ.get("MASTER_ADDR", "x"), os.environ.get("MASTER_PORT", "0")))


class GAN(L.LightningModule):
    def __init__(self, d_floor):
        super().__init__()
        self.automatic_optimization = False
        self.gen = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
        self.disc = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        self.bce, self.d_floor = nn.BCEWithLogitsLoss(), d_floor

    def training_step(self, batch, batch_idx):
        opt_g, opt_d = self.optimizers()
        (real,) = batch
        z = torch.randn(real.size(0), 2)
        fake = self.gen(z)
        r, f = self.disc(real), self.disc(fake.detach())
        d_loss = self.bce(r, torch.ones_like(r)) + self.bce(f, torch.zeros_like(f))
        if d_loss.item() > self.d_floor:
            opt_d.zero_grad()
            self.manual_backward(d_loss)  # expect: BCL011
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
    scales = torch.rand(16, 1).repeat_interleave(8, 0) * 6
    data = TensorDataset(torch.randn(128, 4) * scales + 1.0)
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp_find_unused_parameters_true", max_epochs=1,
                        default_root_dir=ROOT, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(GAN(d_floor=1.3), DataLoader(data, batch_size=8))
    shutil.rmtree(ROOT, ignore_errors=True)


if __name__ == "__main__":
    main()
