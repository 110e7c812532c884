# verify: hang
"""A TrainerCallback that asks for an evaluation every N training tokens, counted by each process.

Modelled on unslothai/unsloth-zoo#873 (review: a callback that "mutates the flag only on rank
0 ... Rank 0 can enter `_run_checkpoint` while peers skip ahead to the next stop/training
collective, misordering collectives or hanging") and allenai/OLMo-core#244 (a run control
called from some ranks only: "otherwise you'll get a distributed deadlock").

    https://github.com/unslothai/unsloth-zoo/pull/873
    https://github.com/allenai/OLMo-core/pull/244

`CountingCollator` pads each batch and adds its non-padding tokens to `tokens_seen`; the
callback sets `control.should_evaluate` whenever that count passes the next multiple of
`EVAL_EVERY_TOKENS`. The collator runs in each process on that process's batches (accelerate
gives process 0 batches 0, 2, 4 and process 1 batches 1, 3, 5), and the odd batches hold the
long sequences: process 1 passes 24 tokens at its second step, process 0 never does, so only
process 1 enters `Trainer.evaluate()`, which gathers every eval batch.
"""
import os
import tempfile

import torch
import torch.nn.functional as F
from torch import nn
from transformers import Trainer, TrainerCallback, TrainingArguments

VOCAB, EVAL_EVERY_TOKENS = 16, 24
OUTPUT_DIR = os.path.join(
    tempfile.gettempdir(), f"blind8-hf-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
)


def make_samples(n):
    samples = []
    for i in range(n):
        length = 8 if (i // 2) % 2 else 2  # pairs of long sequences alternate with pairs of short ones
        ids = [(3 * i + j) % (VOCAB - 1) + 1 for j in range(length)]
        samples.append({"input_ids": ids, "labels": float(length) / 8})
    return samples


class CountingCollator:
    def __init__(self):
        self.tokens_seen = 0

    def __call__(self, features):
        longest = max(len(f["input_ids"]) for f in features)
        ids = torch.zeros(len(features), longest, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, feature in enumerate(features):
            ids[row, : len(feature["input_ids"])] = torch.tensor(feature["input_ids"])
            mask[row, : len(feature["input_ids"])] = 1
        self.tokens_seen += int(mask.sum())
        labels = torch.tensor([f["labels"] for f in features])
        return {"input_ids": ids, "attention_mask": mask, "labels": labels}


class TokenRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.EmbeddingBag(VOCAB, 4, mode="sum")
        self.out = nn.Linear(4, 1)

    def forward(self, input_ids, attention_mask, labels=None):
        pred = self.out(self.embed(input_ids, per_sample_weights=attention_mask.float())).squeeze(-1)
        return {"loss": F.mse_loss(pred, labels), "logits": pred}


class EvalEveryTokens(TrainerCallback):
    def __init__(self, collator, every):
        self.collator, self.every, self.next_eval = collator, every, every

    def on_step_end(self, args, state, control, **kwargs):
        if self.collator.tokens_seen >= self.next_eval:
            self.next_eval += self.every
            control.should_evaluate = True  # expect: BCL011
        return control


def main():
    torch.manual_seed(0)
    collator = CountingCollator()
    args = TrainingArguments(
        output_dir=OUTPUT_DIR, use_cpu=True, per_device_train_batch_size=2,
        per_device_eval_batch_size=2, num_train_epochs=1, train_sampling_strategy="sequential",
        eval_strategy="no", save_strategy="no", logging_strategy="no", report_to="none",
        disable_tqdm=True, remove_unused_columns=False, dataloader_num_workers=0, learning_rate=0.05,
    )
    trainer = Trainer(
        model=TokenRegressor(), args=args, train_dataset=make_samples(12),
        eval_dataset=make_samples(4), data_collator=collator,
        callbacks=[EvalEveryTokens(collator, EVAL_EVERY_TOKENS)],
    )
    trainer.train()
    print(f"[process {trainer.args.process_index}] {collator.tokens_seen} tokens collated")


if __name__ == "__main__":
    main()
