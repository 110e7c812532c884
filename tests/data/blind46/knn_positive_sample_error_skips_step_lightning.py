# verify: error,hang
"""kNN-contrastive training step that samples positives from a per-class memory, or skips.

Modelled on https://github.com/zyh190507/KnnContrastiveForOOD/issues/2 (`random.sample`
of positives from a class's stored samples raises "ValueError: Sample larger than
population or is negative" when the class holds fewer than the positives asked for). Here
the memory holds this process's own past embeddings per class; a `ValueError` on a class
it has seen too rarely is caught and the step skipped (`return None`), so Lightning skips
this process's backward, DDP's gradient all-reduce, while the other process runs it
(Lightning 2.6.6 refuses that with a RuntimeError on the skipping process).
"""
import os
import random
import shutil
import tempfile
from collections import defaultdict

import lightning as L
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class KnnContrastive(L.LightningModule):
    def __init__(self, positives=2):
        super().__init__()
        self.encoder = torch.nn.Linear(8, 4)
        self.memory = defaultdict(list)
        for c in (0, 1):  # prototypes of the classes known before training
            self.memory[c] = [F.normalize(torch.ones(4) * (c + 1), dim=0)] * 2
        self.positives = positives

    def sample_positives(self, label):
        return torch.stack(random.sample(self.memory[label], self.positives))

    def training_step(self, batch, batch_idx):
        x, y = batch
        emb = F.normalize(self.encoder(x), dim=1)
        try:
            pos = torch.stack([self.sample_positives(int(c)) for c in y])
        except ValueError:
            return None  # expect: BCL011
        finally:
            for e, c in zip(emb.detach(), y):
                self.memory[int(c)].append(e)
        return -(emb[:, None, :] * pos).sum(-1).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    root = os.path.join(tempfile.gettempdir(), "blind46-{}-{}-knn".format(
        os.environ.get("MASTER_ADDR", "local"), os.environ.get("MASTER_PORT", "0")))
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(48, 8), torch.randint(0, 3, (48,)))
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=1,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, default_root_dir=root)
    trainer.fit(KnnContrastive(), DataLoader(data, batch_size=4))
    if trainer.is_global_zero:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
