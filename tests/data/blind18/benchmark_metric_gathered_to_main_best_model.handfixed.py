# verify: ok
"""Hand fix: process 0 broadcasts the benchmark score, and every process adds it to its metrics.

As axolotl#537 did ("broadcast the metrics to all ranks so they have the metrics available"):
`dist.broadcast_object_list([score], src=0)` after the gather, then `metrics["eval_bench_accuracy"]`
is set on every process, so the Trainer's best-metric lookup finds it everywhere.

Original docstring: a benchmark callback whose score exists only on the process that gathered the
answers.

Modelled on axolotl-ai-cloud/axolotl#537 (https://github.com/axolotl-ai-cloud/axolotl/pull/537):
benchmark scores added to the evaluation metrics and used as `metric_for_best_model` (early
stopping, best checkpoint) worked on one GPU; with two, "needed to broadcast the metrics to all
ranks so they have the metrics available".

Here a `TrainerCallback.on_evaluate` scores a small multiple-choice benchmark: every process
answers its share of the questions and `dist.gather_object` collects the answers on process 0,
which adds `eval_bench_accuracy` to the evaluation metrics. The Trainer then looks the metric up
on every process (`_determine_best_metric`): process 1 has no such key and raises `KeyError`, while
process 0 goes on training and waits in the next gradient all-reduce.
"""
import os
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from transformers import Trainer, TrainerCallback, TrainingArguments

VOCAB, CLASSES, LENGTH = 40, 3, 4


def make_rows(n: int, offset: int) -> list[dict]:
    rows = []
    for i in range(n):
        label = (i + offset) % CLASSES
        ids = [(label * 11 + 3 * k + i) % VOCAB for k in range(LENGTH)]
        rows.append({"input_ids": ids, "labels": label})
    return rows


QUESTIONS = [
    {"input_ids": [(c * 11 + 5 * k + q) % VOCAB for k in range(LENGTH)], "answer": c}
    for q, c in enumerate([0, 1, 2, 1, 0, 2, 2])
]


class BagClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(VOCAB, 16)
        self.out = nn.Linear(16, CLASSES)

    def forward(self, input_ids, labels=None):
        logits = self.out(self.bag(input_ids))
        loss = F.cross_entropy(logits, labels) if labels is not None else None
        return {"loss": loss, "logits": logits}


class BenchmarkCallback(TrainerCallback):
    """Scores the benchmark after every evaluation and reports it with the evaluation metrics."""

    def on_evaluate(self, args, state, control, metrics=None, model=None, **kwargs):
        mine = QUESTIONS[args.process_index :: args.world_size]
        with torch.no_grad():
            answers = [int(model(torch.tensor([q["input_ids"]]))["logits"].argmax()) == q["answer"] for q in mine]
        gathered = [None] * args.world_size if args.process_index == 0 else None
        dist.gather_object(answers, gathered, dst=0)
        score = [None]
        if gathered is not None:
            flat = [a for part in gathered for a in part]
            score[0] = sum(flat) / len(flat)
        dist.broadcast_object_list(score, src=0)
        metrics["eval_bench_accuracy"] = score[0]


def output_dir() -> str:
    tag = f"{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
    return str(Path(tempfile.gettempdir()) / f"blind18-bench-{tag}")


def main() -> None:
    args = TrainingArguments(
        output_dir=output_dir(),
        use_cpu=True,
        per_device_train_batch_size=2,
        per_device_eval_batch_size=2,
        max_steps=6,
        eval_strategy="steps",
        eval_steps=2,
        save_strategy="no",
        logging_strategy="no",
        metric_for_best_model="bench_accuracy",
        greater_is_better=True,
        learning_rate=0.05,
        report_to="none",
        disable_tqdm=True,
        seed=0,
    )
    torch.manual_seed(0)
    trainer = Trainer(
        model=BagClassifier(),
        args=args,
        train_dataset=make_rows(24, 0),
        eval_dataset=make_rows(6, 1),
        callbacks=[BenchmarkCallback()],
    )
    trainer.train()
    print(f"process {args.process_index}: best bench accuracy {trainer.state.best_metric}", flush=True)


if __name__ == "__main__":
    main()
