# verify: error,hang
"""Pseudo-label distillation with the Lightning Trainer: `training_step` keeps only the records
the frozen teacher labels with confidence, and returns None (skip the step) when none is left.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/3323 (skipping `training_step`
based on the batch's statistics by returning None). Under DDP each process decides from its own
batch: the process whose batch has no confident row skips its backward (or is refused by
Lightning), while the other process enters DDP's gradient all-reduce.
"""
import os
import shutil
import tempfile

import lightning as L
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

ROOT = os.path.join(tempfile.gettempdir(), f"blind47-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-pl")


class PseudoLabelStudent(L.LightningModule):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.teacher = torch.nn.Linear(8, 4, bias=False).requires_grad_(False)
        self.student = torch.nn.Linear(8, 4)

    def training_step(self, batch, batch_idx):
        (x,) = batch
        probs = F.softmax(self.teacher(x), dim=-1)
        conf, pseudo = probs.max(dim=-1)
        keep = conf > 0.6
        if not keep.any():
            return None  # expect: BCL011
        return F.cross_entropy(self.student(x[keep]), pseudo[keep])

    def configure_optimizers(self):
        return torch.optim.SGD(self.student.parameters(), lr=0.1)


gen = torch.Generator().manual_seed(7)
records = torch.stack([torch.randn(8, generator=gen) * (0.0 if i % 8 in (1, 3) else 3.0) for i in range(16)])
# The DistributedSampler (shuffle=False) gives records 1, 3, 9, 11 to the second process.
loader = DataLoader(TensorDataset(records), batch_size=2, shuffle=False)
trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=1, logger=False,
                    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                    default_root_dir=ROOT)
trainer.fit(PseudoLabelStudent(), loader)
trainer.strategy.barrier()
shutil.rmtree(ROOT, ignore_errors=True)
