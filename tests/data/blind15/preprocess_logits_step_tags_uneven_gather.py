# verify: error
"""`preprocess_logits_for_metrics` keeps only the step-tag positions, between the Trainer's padding and its gather.

Modelled on openreasoner/openr#83 (https://github.com/openreasoner/openr/issues/83): in multi-GPU
training of a process reward model, evaluation hangs in the Trainer's evaluation loop because the
repository's `preprocess_logits_for_metrics` takes out the logits at the step tags, and "the two
gpus are preprocessing data samples with different nums of steps".

Here each evaluation row is a solution whose steps end with the `STEP` token; only those positions
carry a label (step correct or not). `Trainer.evaluation_loop` pads the logits across processes on
the sequence axis, calls `keep_step_logits`, and gathers its result with `gather_for_metrics`. The
function returns `logits[labels != -100]`, one row per step: process 0's batch holds 3 steps,
process 1's 5, so the two processes hand tensors of different lengths to the gather.
"""
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.data import Dataset
from transformers import Trainer, TrainingArguments

STEP = 7
VOCAB = 10
# token ids; STEP closes each reasoning step. Rows 0-1 go to process 0, rows 2-3 to process 1.
SOLUTIONS = [
    [1, 2, 7, 3, 4, 5, 7, 0],
    [2, 3, 4, 7, 0, 0, 0, 0],
    [1, 7, 2, 7, 3, 7, 0, 0],
    [4, 5, 7, 6, 7, 0, 0, 0],
]
STEP_LABELS = [[1, 0], [1], [1, 1, 0], [0, 1]]
OUT = os.path.join(
    tempfile.gettempdir(), f"blind15-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}"
)


class Solutions(Dataset):
    def __len__(self):
        return len(SOLUTIONS)

    def __getitem__(self, i):
        ids = torch.tensor(SOLUTIONS[i])
        labels = torch.full_like(ids, -100)
        labels[ids == STEP] = torch.tensor(STEP_LABELS[i])
        return {"input_ids": ids, "labels": labels}


class StepScorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 8)
        self.head = nn.Linear(8, 2)

    def forward(self, input_ids, labels=None):
        logits = self.head(self.emb(input_ids))
        out = {"logits": logits}
        if labels is not None:
            out["loss"] = nn.functional.cross_entropy(logits.reshape(-1, 2), labels.reshape(-1), ignore_index=-100)
        return out


def keep_step_logits(logits, labels):
    return logits[labels != -100]  # expect: BCL015


def step_accuracy(eval_pred):
    labels = torch.as_tensor(eval_pred.label_ids)
    preds = torch.as_tensor(eval_pred.predictions).argmax(-1)
    return {"step_acc": float((preds == labels[labels != -100]).float().mean())}


def main():
    torch.manual_seed(0)
    args = TrainingArguments(
        output_dir=OUT,
        use_cpu=True,
        per_device_eval_batch_size=2,
        report_to=[],
        disable_tqdm=True,
    )
    trainer = Trainer(
        model=StepScorer(),
        args=args,
        eval_dataset=Solutions(),
        compute_metrics=step_accuracy,
        preprocess_logits_for_metrics=keep_step_logits,
    )
    metrics = trainer.evaluate()
    if trainer.is_world_process_zero():
        print(metrics)


if __name__ == "__main__":
    main()
