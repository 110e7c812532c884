# verify: error
"""Per-task accuracy counts reduced as one dict, keyed in the order each process first saw a task.

Modelled on EvolvingLMMs-Lab/lmms-eval#1089, whose per-metric gather loop walked
`task_output.sample_metrics` in the insertion order of each rank's own samples ("if ranks
processed different samples that insert keys in different order, the gathers misalign"), and on
facebookresearch/maskrcnn-benchmark#309 (`reduce_loss_dict` walks `loss_dict.items()`).

    https://github.com/EvolvingLMMs-Lab/lmms-eval/pull/1089
    https://github.com/facebookresearch/maskrcnn-benchmark/issues/309

`TaskAccuracy.update()` creates a task's count tensor (hits and totals per gold class) the
first time one of its records turns up in this process's share. `accelerator.reduce()` walks
the dict in insertion order and all-reduces one tensor per key. Both shares hold all three
tasks, but process 0 meets "sentiment" second and process 1 meets "topic" second, so the second
all-reduce pairs a (2, 2) tensor with a (2, 4) one.
"""
import torch
from accelerate import Accelerator

NUM_CLASSES = {"nli": 3, "sentiment": 2, "topic": 4}
# (task, gold label, predicted label), in the order the evaluation file lists them
RECORDS = [
    ("nli", 0, 0), ("sentiment", 1, 1), ("topic", 2, 3), ("sentiment", 0, 0),
    ("nli", 2, 1), ("topic", 1, 1), ("nli", 1, 1), ("sentiment", 1, 0),
]


class TaskAccuracy:
    def __init__(self, accelerator):
        self.accelerator = accelerator
        self.counts = {}

    def update(self, task, label, predicted):
        counts = self.counts.setdefault(task, torch.zeros(2, NUM_CLASSES[task]))
        counts[0, label] += float(label == predicted)
        counts[1, label] += 1.0

    def per_task(self):
        totals = self.accelerator.reduce(self.counts, reduction="sum")  # expect: BCL005
        return {task: round((c[0].sum() / c[1].sum()).item(), 3) for task, c in totals.items()}


def main():
    accelerator = Accelerator()
    meter = TaskAccuracy(accelerator)
    with accelerator.split_between_processes(RECORDS) as share:
        for task, label, predicted in share:
            meter.update(task, label, predicted)
    scores = meter.per_task()
    accelerator.print(f"accuracy per task: {scores}")
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
