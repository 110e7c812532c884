# verify: ok
"""Look-alike of token_budget_eval_callback.py: a callback that sets `control.should_evaluate` on a schedule every process shares.

The same collator still counts each process's own tokens (only for the final print), but the
evaluation is asked for every `EVAL_EVERY_STEPS` optimizer steps, read from `state.global_step`,
which every process advances together: all of them enter `Trainer.evaluate()` at the same steps.
"""
import os
import tempfile

import torch
import torch.nn.functional as F
from torch import nn
from transformers import Trainer, TrainerCallback, TrainingArguments

VOCAB, EVAL_EVERY_STEPS = 16, 2
OUTPUT_DIR = os.path.join(
    tempfile.gettempdir(), f"blind8-hf-steps-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
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


class EvalEverySteps(TrainerCallback):
    def __init__(self, every):
        self.every = every

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step % self.every == 0:
            control.should_evaluate = True
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
        callbacks=[EvalEverySteps(EVAL_EVERY_STEPS)],
    )
    trainer.train()
    print(f"[process {trainer.args.process_index}] {collator.tokens_seen} tokens collated")


if __name__ == "__main__":
    main()
