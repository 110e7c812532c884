# verify: hang
"""An evaluation metric computed from each process's own prediction records, fed to EarlyStoppingCallback.

Modelled on huggingface/transformers#17478 (https://github.com/huggingface/transformers/issues/17478):
the model's extra outputs were Python objects the Trainer does not gather, so `compute_metrics`
read each process's own outputs and every process got a different metric. `EarlyStoppingCallback`
then stopped one process while the others went on training and waited for it.

Here `prediction_step` keeps, beside the tensors the Trainer gathers, a Python list of absolute
errors on the "annotated" evaluation rows (the rows with a reference span); `compute_metrics`
reports their mean as `eval_annotated_mae`. The annotated rows all fall in batches the evaluation
loader deals to process 0, so process 1's list is empty and its metric is NaN at every evaluation:
it never improves there, and after `early_stopping_patience` evaluations process 1 leaves the
training loop while process 0, whose error keeps falling, goes on to the next step.
"""
import math
import os
import tempfile
from pathlib import Path

import torch
import torch.nn as nn
from transformers import EarlyStoppingCallback, Trainer, TrainingArguments

WEIGHTS = torch.tensor([1.5, -2.0, 0.5, 1.0])


def make_rows(n: int, seed: int, annotated: set[int]) -> list[dict]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = x @ WEIGHTS
    return [{"features": x[i].tolist(), "labels": float(y[i]), "annotated": int(i in annotated)} for i in range(n)]


class SpanRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 1)

    def forward(self, features, labels=None, annotated=None):
        pred = self.linear(features).squeeze(-1)
        loss = nn.functional.mse_loss(pred, labels) if labels is not None else None
        return {"loss": loss, "logits": pred}


class SpanTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.span_errors: list[float] = []

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        loss, logits, labels = super().prediction_step(model, inputs, prediction_loss_only, ignore_keys)
        keep = inputs["annotated"].bool()
        self.span_errors.extend((logits[keep] - labels[keep]).abs().tolist())
        return loss, logits, labels


def annotated_mae(trainer: SpanTrainer):
    def compute_metrics(eval_pred):
        errors, trainer.span_errors = trainer.span_errors, []
        mae = sum(errors) / len(errors) if errors else math.nan
        return {"annotated_mae": mae}  # expect: BCL011

    return compute_metrics


def output_dir() -> str:
    tag = f"{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
    return str(Path(tempfile.gettempdir()) / f"blind18-spans-{tag}")


def main() -> None:
    args = TrainingArguments(
        output_dir=output_dir(),
        use_cpu=True,
        per_device_train_batch_size=4,
        per_device_eval_batch_size=2,
        max_steps=16,
        eval_strategy="steps",
        eval_steps=2,
        save_strategy="no",
        logging_strategy="no",
        metric_for_best_model="annotated_mae",
        greater_is_better=False,
        learning_rate=0.02,
        report_to="none",
        disable_tqdm=True,
        seed=0,
    )
    torch.manual_seed(0)
    trainer = SpanTrainer(
        model=SpanRegressor(),
        args=args,
        train_dataset=make_rows(64, 0, set()),
        eval_dataset=make_rows(8, 1, annotated={0, 1, 4, 5}),
        callbacks=[EarlyStoppingCallback(early_stopping_patience=2)],
    )
    trainer.compute_metrics = annotated_mae(trainer)
    trainer.train()
    print(f"process {args.process_index}: stopped at step {trainer.state.global_step}", flush=True)


if __name__ == "__main__":
    main()
