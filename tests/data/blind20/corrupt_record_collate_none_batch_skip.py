# verify: hang
"""A collate function that drops unreadable records and yields None for an all-bad batch.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/6753 (fixed by
https://github.com/Lightning-AI/pytorch-lightning/pull/7342): a dataloader yields `None` for a
batch whose samples all failed to load, and Lightning skips that training step. Under DDP only
the process whose shard holds the bad records skips it, so its gradient all-reduces fall out of
step with the other process's.
"""
import torch
import lightning as L
from torch.utils.data import DataLoader, Dataset

CORRUPT = {1, 3}  # records that fail to decode; both land in process 1's first batch


class RecordDataset(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, idx):
        if idx in CORRUPT:
            return None  # unreadable record
        x = torch.full((4,), idx / 16)
        return x, x.sum(dim=0, keepdim=True)


def drop_corrupt(samples):
    samples = [s for s in samples if s is not None]
    if not samples:
        return None  # expect: BCL005
    xs, ys = zip(*samples)
    return torch.stack(xs), torch.stack(ys)


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def train_dataloader(self):
        return DataLoader(RecordDataset(), batch_size=2, collate_fn=drop_corrupt)


def main():
    L.seed_everything(0)
    trainer = L.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=2, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
    )
    trainer.fit(Regressor())
    print(f"rank {trainer.global_rank} finished at step {trainer.global_step}")


if __name__ == "__main__":
    main()
