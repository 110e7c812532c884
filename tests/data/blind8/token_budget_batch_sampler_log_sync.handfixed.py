# verify: ok
"""Hand-fixed twin of token_budget_batch_sampler_log_sync.py.

The token-budget batches are cut from the whole corpus, the same on every process; their number
is trimmed to a multiple of the world size and each process takes every `world_size`-th batch,
so every process runs the same number of steps (3 here) and logs the same number of times.
"""
import torch
import torch.nn.functional as F
from lightning.pytorch import LightningModule, Trainer
from torch import nn
from torch.utils.data import DataLoader, Sampler

VOCAB, MAX_TOKENS = 16, 16
LENGTHS = [2, 7, 3, 8, 2, 6, 4, 8, 3, 7, 2, 6]
CORPUS = [([(i + j) % (VOCAB - 1) + 1 for j in range(n)], float(n) / 8) for i, n in enumerate(LENGTHS)]


class TokenBudgetBatchSampler(Sampler):
    def __init__(self, lengths, max_tokens, rank, world_size):
        everything = sorted(range(len(lengths)), key=lambda i: lengths[i])
        batches, batch = [], []
        for index in everything:
            if batch and lengths[index] * (len(batch) + 1) > max_tokens:
                batches.append(batch)
                batch = []
            batch.append(index)
        if batch:
            batches.append(batch)
        usable = len(batches) // world_size * world_size
        self.batches = batches[rank:usable:world_size]

    def __iter__(self):
        return iter(self.batches)

    def __len__(self):
        return len(self.batches)


def pad_batch(rows):
    longest = max(len(ids) for ids, _ in rows)
    ids = torch.zeros(len(rows), longest, dtype=torch.long)
    for r, (tokens, _) in enumerate(rows):
        ids[r, : len(tokens)] = torch.tensor(tokens)
    return ids, torch.tensor([target for _, target in rows])


class LengthRegressor(LightningModule):
    def __init__(self):
        super().__init__()
        self.embed = nn.EmbeddingBag(VOCAB, 4, mode="sum", padding_idx=0)
        self.out = nn.Linear(4, 1)

    def train_dataloader(self):
        sampler = TokenBudgetBatchSampler(LENGTHS, MAX_TOKENS, self.global_rank, self.trainer.world_size)
        return DataLoader(CORPUS, batch_sampler=sampler, collate_fn=pad_batch)

    def training_step(self, batch, batch_idx):
        ids, target = batch
        loss = F.mse_loss(self.out(self.embed(ids)).squeeze(-1), target)
        self.log("train/loss", loss, on_step=True, on_epoch=False, sync_dist=True, batch_size=len(ids))
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def main():
    torch.manual_seed(0)
    trainer = Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=1, use_distributed_sampler=False,
        logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
    )
    trainer.fit(LengthRegressor())
    trainer.strategy.barrier()
    print(f"[rank {trainer.global_rank}] done")


if __name__ == "__main__":
    main()
