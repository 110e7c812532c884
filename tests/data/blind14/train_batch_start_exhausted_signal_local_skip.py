# verify: hang
"""A per-process stream that ends with an "exhausted" signal batch; the hook skips the rest of the epoch.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/21296 (an IterableDataset of
a different number of batches per GPU yields a signal once exhausted, and `on_train_batch_start`
returns -1 on it to end the epoch; the reporter first all-gathers the flag so every rank stops
together, this program does not).

`ShardStream` deals `RECORDS[rank::world]` in batches of two and then yields one empty batch as
the signal: three batches on process 0 (five rows), two on process 1 (four rows). At batch 2
process 1 returns -1 and leaves the epoch; process 0 trains on, its DDP backward waiting for a
gradient all-reduce nobody joins.
"""
import torch
import torch.distributed as dist
import torch.nn as nn
from lightning.pytorch import LightningModule, Trainer
from torch.utils.data import DataLoader, IterableDataset

RECORDS = [[0.1 * i, 0.2 * i, 1.0 - 0.1 * i] for i in range(9)]
BATCH = 2


class ShardStream(IterableDataset):
    def __iter__(self):
        rank, world = dist.get_rank(), dist.get_world_size()
        mine = RECORDS[rank::world]
        for start in range(0, len(mine), BATCH):
            yield torch.tensor(mine[start:start + BATCH])
        yield torch.empty(0, 3)  # the exhausted signal


class Regressor(LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)

    def on_train_batch_start(self, batch, batch_idx):
        if batch.numel() == 0:
            return -1  # expect: BCL011

    def training_step(self, batch, batch_idx):
        return (self.net(batch).squeeze(1) - batch.sum(dim=1)).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    torch.manual_seed(0)
    trainer = Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=1, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
    )
    trainer.fit(Regressor(), DataLoader(ShardStream(), batch_size=None))
    print(f"rank {trainer.global_rank}: {trainer.global_step} steps")


if __name__ == "__main__":
    main()
