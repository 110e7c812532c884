# verify: ok
"""Hand fix of packed_val_rows_empty_shard_lightning.

The whole validation split is packed once, identically on every process (the last row padded
with zeros instead of dropped), and the packed rows are handed out by Lightning's
`DistributedSampler`, which pads the row list so every process runs the same number of
validation steps (the check that https://github.com/NVIDIA-NeMo/Megatron-Bridge/issues/1477 asks for
becomes unnecessary: no process can be left without rows).
"""
import os
import shutil
import tempfile

import lightning as L
import torch
from torch.utils.data import DataLoader

SEQ = 16
TRAIN = torch.randn(8, SEQ, generator=torch.Generator().manual_seed(0))
VAL_DOC_LENGTHS = [12, 3, 9, 4, 7, 2]


def pack_rows_padded(lengths, seq):
    tokens = [float(n) / seq for n in lengths for _ in range(n)]
    tokens += [0.0] * (-len(tokens) % seq)
    return [torch.tensor(tokens[i:i + seq]) for i in range(0, len(tokens), seq)]


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(SEQ, 1)

    def training_step(self, batch, batch_idx):
        return self.layer(batch).pow(2).mean()

    def validation_step(self, batch, batch_idx):
        loss = self.layer(batch).pow(2).mean()
        self.log("val_loss", loss, sync_dist=True)

    def train_dataloader(self):
        return DataLoader(TRAIN, batch_size=2)

    def val_dataloader(self):
        return DataLoader(pack_rows_padded(VAL_DOC_LENGTHS, SEQ), batch_size=1)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


def main():
    root = os.path.join(tempfile.gettempdir(), "blind51-%s-%s-valfix" % (
        os.environ.get("MASTER_ADDR", "local"), os.environ.get("MASTER_PORT", "0")))
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=1,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, num_sanity_val_steps=0,
                        default_root_dir=root)
    trainer.fit(Model())
    print("val_loss:", trainer.callback_metrics.get("val_loss"))
    if trainer.is_global_zero:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
