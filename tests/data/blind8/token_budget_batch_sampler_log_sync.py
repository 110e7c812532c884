# verify: hang
"""Dynamic batch sizes: each process packs its own share into batches under a padded-token budget.

Modelled on facebookresearch/vggt#285 ("Potential Deadlock in Multi-GPU Training with Dynamic
Batch Sizes ... GPU0 might complete all its training on its assigned samples in 20 batches, but
GPU1 needs a total of 30 batches ... GPU1 will wait for GPU0 to perform the DDP allreduce").

    https://github.com/facebookresearch/vggt/issues/285

`TokenBudgetBatchSampler` takes this process's strided share of the corpus, sorts it by length
and cuts it into batches whose padded size stays under `MAX_TOKENS` (the Trainer is told
`use_distributed_sampler=False`, so it keeps the sampler as written). Process 0's share is the
short sequences (2 batches), process 1's the long ones (3 batches): in its third step process 1
logs the step loss with `sync_dist=True` while process 0 has finished its epoch.
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
        mine = sorted(range(rank, len(lengths), world_size), key=lambda i: lengths[i])
        self.batches, batch = [], []
        for index in mine:
            if batch and lengths[index] * (len(batch) + 1) > max_tokens:
                self.batches.append(batch)
                batch = []
            batch.append(index)
        if batch:
            self.batches.append(batch)

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
        self.log("train/loss", loss, on_step=True, on_epoch=False, sync_dist=True, batch_size=len(ids))  # expect: BCL011
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
