# verify: error,hang
"""A streamed dataset padded per batch, fed to the `Trainer`, whose loader then dispatches batches.

Modelled on huggingface/transformers#26548
(https://github.com/huggingface/transformers/issues/26548): with an `IterableDataset`, Accelerate's
`dispatch_batches` defaults to `True`, so process 0 alone draws one batch per process, concatenates
them and sends each process its slice. The collator pads each batch to its own longest sentence, so
the two batches process 0 draws are 5 and 7 tokens wide and the concatenation raises on process 0
only, while process 1 waits for its slice in the dispatcher's broadcast.
"""
import os
import tempfile

import torch
from torch import nn
from torch.utils.data import IterableDataset
from transformers import Trainer, TrainingArguments

LENGTHS = [3, 5, 4, 7, 2, 6, 5, 3, 4, 6, 7, 2, 3, 5, 6, 4]


class SentenceStream(IterableDataset):
    """Sentences read from a stream, one at a time (token ids only, no padding yet)."""

    def __iter__(self):
        for i, n in enumerate(LENGTHS):
            yield {"input_ids": [(i * 7 + t) % 50 + 1 for t in range(n)], "label": i % 2}


def collate(rows):
    width = max(len(r["input_ids"]) for r in rows)  # expect: BCL015
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
    run = f"blind24-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-stream"
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
    trainer = Trainer(model=BagOfTokens(), args=args, train_dataset=SentenceStream(), data_collator=collate)
    trainer.train()


if __name__ == "__main__":
    main()
