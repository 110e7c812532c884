# verify: ok check=BACKBONE_SUM
"""Look-alike: the set-up of `backbone_finetuning_unfreeze_after_ddp_setup` (Lightning's
`BackboneFinetuning` freezes the backbone in its `setup` hook, before DDP wraps the module), run as
a linear-probe stage: the unfreeze epoch (10) lies beyond `max_epochs` (3), so the backbone stays
frozen for the whole run and only the head, whose gradients DDP averages, is trained. Correct.
"""
import os
import shutil
import tempfile

import lightning.pytorch as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch.callbacks import BackboneFinetuning
from torch.utils.data import DataLoader, TensorDataset

RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind37-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-run",
)
BACKBONE_SUM = None


class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 8), nn.ReLU())
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.backbone(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(filter(lambda p: p.requires_grad, self.parameters()), lr=0.1)


def make_loader():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 10, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 1).long()
    return DataLoader(TensorDataset(x, y), batch_size=4)


def main():
    global BACKBONE_SUM
    torch.manual_seed(0)
    model = Classifier()
    trainer = pl.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=3, default_root_dir=RUN_DIR,
        logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
        callbacks=[BackboneFinetuning(unfreeze_backbone_at_epoch=10, backbone_initial_ratio_lr=0.5)],
    )
    trainer.fit(model, make_loader())
    BACKBONE_SUM = round(sum(p.sum().item() for p in model.backbone.parameters()), 4)
    print(f"rank {trainer.global_rank}: backbone sum {BACKBONE_SUM}", flush=True)
    trainer.strategy.barrier()
    shutil.rmtree(RUN_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
