# verify: ok
"""Hand fix: every batch carries `labels`, unlabelled rows filled with -100.

Modelled on huggingface/transformers#35076
(https://github.com/huggingface/transformers/issues/35076): `num_items_in_batch` can be `None`
on one process while `self.accelerator.gather(num_items_in_batch)` runs with
`average_tokens_across_devices`; transformers now skips the gather when it is `None`, which
only moves the mismatch.

The collator attaches `labels` only when at least one row of the batch is labelled; the model
falls back to an entropy loss without them. The Trainer counts the label tokens of a batch, and
gathers that count across processes, only when the batch has `labels` (the model takes
`**kwargs`, so `num_items_in_batch` is passed on). Process 0's batches each hold a labelled
row, process 1's none: process 0 enters the gather, process 1 goes straight to its backward.

Here `labels` is always there (all -100 for an unlabelled row), so every process counts and
gathers on every step; the model adds the entropy term for the unlabelled rows itself.
"""
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import SequentialSampler
from transformers import Trainer, TrainingArguments

VOCAB = 32
OUT_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind23-{os.environ.get('MASTER_ADDR', 'x')}-{os.environ.get('MASTER_PORT', '0')}-tagger",
)


def make_rows():
    rows = []
    for i in range(8):
        ids = [(i * 5 + j) % VOCAB for j in range(6)]
        tags = [(t * 3) % VOCAB for t in ids] if i % 4 == 0 else None
        rows.append({"input_ids": ids, "tags": tags})
    return rows


def collate(rows):
    batch = {"input_ids": torch.tensor([r["input_ids"] for r in rows])}
    batch["labels"] = torch.tensor([r["tags"] if r["tags"] is not None else [-100] * 6 for r in rows])
    return batch


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 16)
        self.head = nn.Linear(16, VOCAB)

    def forward(self, input_ids, labels=None, **kwargs):
        logits = self.head(self.emb(input_ids))
        logp = logits.log_softmax(-1)
        unlabelled = (labels == -100).all(dim=1)
        entropy = -(logp.exp() * logp).sum(-1).mean(dim=1)
        total = F.nll_loss(logp.view(-1, VOCAB), labels.view(-1), ignore_index=-100, reduction="sum")
        loss = total / kwargs.get("num_items_in_batch", 1) + (entropy * unlabelled).sum() / len(labels)
        return {"loss": loss, "logits": logits}


class InOrderTrainer(Trainer):
    def _get_train_sampler(self, train_dataset=None):
        return SequentialSampler(train_dataset if train_dataset is not None else self.train_dataset)


def main():
    args = TrainingArguments(
        output_dir=OUT_DIR,
        per_device_train_batch_size=2,
        num_train_epochs=1,
        learning_rate=0.05,
        logging_steps=100,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        dataloader_num_workers=0,
        remove_unused_columns=False,
        disable_tqdm=True,
    )
    trainer = InOrderTrainer(model=Tagger(), args=args, train_dataset=make_rows(), data_collator=collate)
    trainer.train()
    print(f"[rank {args.process_index}] done at step {trainer.state.global_step}")


if __name__ == "__main__":
    main()
