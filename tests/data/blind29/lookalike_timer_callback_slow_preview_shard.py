# verify: ok
"""Lightning's Timer callback stops training after a wall-clock budget; one shard is slower.

Resembles wall_clock_budget_callback_slow_preview_shard: the same preview callback makes process
1's clock read about 0.3 s later at every check, and training stops once a time budget is spent.
But the budget is Lightning's own `Timer(duration=..., interval="step")`, whose check broadcasts
process 0's decision (`trainer.strategy.broadcast(should_stop)`) before setting
`trainer.should_stop`, so both processes stop after the same step.
"""
import time
from datetime import timedelta

import lightning.pytorch as pl
import torch
import torch.nn.functional as F
from lightning.pytorch.callbacks import Callback, Timer
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def rows(n=48):
    g = torch.Generator().manual_seed(5)
    x = torch.randn(n, 4, generator=g)
    flagged = torch.arange(n) % 2 == 1  # rows a reviewer asked to see
    return TensorDataset(x, x.sum(1, keepdim=True), flagged)


class RenderPreviews(Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        for _ in range(int(batch[2].sum())):
            time.sleep(0.15)  # stands in for encoding a preview image


class Probe(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y, _ = batch
        return F.mse_loss(self.lin(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    torch.manual_seed(0)
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=2,
        strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=20)),
        max_epochs=2,
        callbacks=[RenderPreviews(), Timer(duration=timedelta(seconds=1.2), interval="step", verbose=False)],
        use_distributed_sampler=False,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    data = rows()
    sampler = DistributedSampler(data, trainer.world_size, trainer.global_rank, shuffle=False)
    trainer.fit(Probe(), DataLoader(data, batch_size=2, sampler=sampler))
    print(f"rank {trainer.global_rank}: stopped at step {trainer.global_step}")


if __name__ == "__main__":
    main()
