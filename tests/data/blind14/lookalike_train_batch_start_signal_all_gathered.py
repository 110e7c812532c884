# verify: ok
"""Look-alike: the same exhausted signal and -1, but the flag is all-gathered first (as the report
does), so every process ends the epoch at the same batch.

A correct program that resembles `train_batch_start_exhausted_signal_local_skip.py` (modelled on
https://github.com/Lightning-AI/pytorch-lightning/issues/21296).
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
        # Every process says whether it still has data; the epoch ends everywhere as soon as
        # one of them is exhausted.
        has_data = self.all_gather(torch.tensor(batch.numel() > 0))
        if not bool(has_data.all()):
            return -1

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
