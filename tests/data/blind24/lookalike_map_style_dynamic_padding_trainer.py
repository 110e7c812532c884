# verify: ok
"""Look-alike: the same per-batch padding collator under the `Trainer`, but over a map-style dataset.

Without an `IterableDataset` Accelerate does not dispatch: each process's loader draws its own
indices (a `DistributedSampler` share of 8 rows) and collates them itself, so batches of different
widths on the two processes never meet in one tensor; DDP's gradients have the same shape anyway.
"""
import os
import tempfile

import torch
from torch import nn
from torch.utils.data import Dataset
from transformers import Trainer, TrainingArguments

LENGTHS = [3, 5, 4, 7, 2, 6, 5, 3, 4, 6, 7, 2, 3, 5, 6, 4]


class Sentences(Dataset):
    """Sentences held in memory (token ids only, no padding yet)."""

    def __len__(self):
        return len(LENGTHS)

    def __getitem__(self, i):
        return {"input_ids": [(i * 7 + t) % 50 + 1 for t in range(LENGTHS[i])], "label": i % 2}


def collate(rows):
    width = max(len(r["input_ids"]) for r in rows)
    ids = torch.tensor([r["input_ids"] + [0] * (width - len(r["input_ids"])) for r in rows])
    return {"input_ids": ids, "labels": torch.tensor([r["label"] for r in rows])}


class BagOfTokens(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.emb = nn.Embedding(51, 8, padding_idx=0)
        self.head = nn.Linear(8, 2)

    def forward(self, input_ids, labels=None):
        mask = (input_ids != 0).unsqueeze(-1).float()
        pooled = (self.emb(input_ids) * mask).sum(1) / mask.sum(1)
        logits = self.head(pooled)
        loss = nn.functional.cross_entropy(logits, labels)
        return {"loss": loss, "logits": logits}


def main():
    run = f"blind24-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-mapstyle"
    args = TrainingArguments(
        output_dir=os.path.join(tempfile.gettempdir(), run),
        max_steps=3,
        per_device_train_batch_size=2,
        learning_rate=0.1,
        use_cpu=True,
        report_to=[],
        save_strategy="no",
        logging_strategy="no",
        disable_tqdm=True,
    )
    trainer = Trainer(model=BagOfTokens(), args=args, train_dataset=Sentences(), data_collator=collate)
    trainer.train()


if __name__ == "__main__":
    main()
