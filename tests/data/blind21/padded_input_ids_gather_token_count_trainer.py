# verify: error
"""Tokens-seen counter that gathers each process's padded `input_ids` before counting them.

Modelled on https://github.com/huggingface/transformers/issues/28791 ("Inappropriate reduce
operation of num_input_tokens_seen is prone to get training stuck"): the Trainer counted tokens
with `self.accelerator.gather(inputs[main_input_name]).numel()`; with a collator that pads each
batch to its own longest sequence the processes hold `input_ids` of different widths, and the
gather of unequal tensors stalls. The issue's fix gathers the count (`.numel()` first). The
installed Trainer already counts that way, so the old line lives in a subclass here, as projects
that copied it still have it.
"""
import os
import tempfile

import torch
from torch import nn
from transformers import Trainer, TrainingArguments

# distinct lengths: two disjoint batches never share their longest sequence
LENGTHS = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]
VOCAB = 32


class TinyCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.head = nn.Linear(16, VOCAB)

    def forward(self, input_ids, attention_mask=None, labels=None):
        logits = self.head(self.embed(input_ids))
        loss = nn.functional.cross_entropy(
            logits[:, :-1].reshape(-1, VOCAB), labels[:, 1:].reshape(-1), ignore_index=-100
        )
        return {"loss": loss, "logits": logits}


def make_dataset():
    g = torch.Generator().manual_seed(3)
    return [{"input_ids": torch.randint(1, VOCAB, (n,), generator=g)} for n in LENGTHS]


def pad_collate(features):
    width = max(len(f["input_ids"]) for f in features)
    ids = torch.zeros(len(features), width, dtype=torch.long)
    mask = torch.zeros(len(features), width, dtype=torch.long)
    for i, f in enumerate(features):
        ids[i, : len(f["input_ids"])] = f["input_ids"]
        mask[i, : len(f["input_ids"])] = 1
    labels = ids.masked_fill(mask == 0, -100)
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


class TokenCountingTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        self.state.num_input_tokens_seen += self.accelerator.gather(inputs["input_ids"]).numel()  # expect: BCL015
        return super().training_step(model, inputs, num_items_in_batch)


def main():
    out = os.path.join(
        tempfile.gettempdir(),
        f"blind21-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-tokens",
    )
    args = TrainingArguments(
        output_dir=out,
        per_device_train_batch_size=2,
        max_steps=4,
        learning_rate=1e-2,
        save_strategy="no",
        logging_strategy="no",
        report_to=[],
        use_cpu=True,
        disable_tqdm=True,
        remove_unused_columns=False,
        seed=0,
    )
    trainer = TokenCountingTrainer(
        model=TinyCausalLM(), args=args, train_dataset=make_dataset(), data_collator=pad_collate
    )
    trainer.train()
    if trainer.is_world_process_zero():
        print("tokens seen", trainer.state.num_input_tokens_seen)


if __name__ == "__main__":
    main()
