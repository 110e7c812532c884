# verify: ok
"""Look-alike: pseudo-label distillation with the Lightning Trainer, where `training_step` keeps
only the records the frozen teacher labels with confidence and, when none is left, returns early.

Correct: the early return gives a zero loss built from the student's output (`sum() * 0.0`), not
None, so every process runs the backward, and DDP's all-reduce, on every batch.
"""
import os
import shutil
import tempfile

import lightning as L
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

ROOT = os.path.join(tempfile.gettempdir(), f"blind47-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-plz")


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
        out = self.student(x)
        if not keep.any():
            return out.sum() * 0.0
        return F.cross_entropy(out[keep], pseudo[keep])

    def configure_optimizers(self):
        return torch.optim.SGD(self.student.parameters(), lr=0.1)


gen = torch.Generator().manual_seed(7)
records = torch.stack([torch.randn(8, generator=gen) * (0.0 if i % 8 in (1, 3) else 3.0) for i in range(16)])
loader = DataLoader(TensorDataset(records), batch_size=2, shuffle=False)
trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=1, logger=False,
                    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                    default_root_dir=ROOT)
trainer.fit(PseudoLabelStudent(), loader)
trainer.strategy.barrier()
shutil.rmtree(ROOT, ignore_errors=True)
