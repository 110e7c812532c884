# verify: ok
"""Hand-fixed twin of task_metrics_first_seen_order_reduce.py.

The count tensors are created up front for every task, in sorted order, so every process
hands `accelerator.reduce()` the same keys in the same order with the same shapes; a task
no process saw keeps a zero total and is left out of the report.
"""
import torch
from accelerate import Accelerator

NUM_CLASSES = {"nli": 3, "sentiment": 2, "topic": 4}
RECORDS = [
    ("nli", 0, 0), ("sentiment", 1, 1), ("topic", 2, 3), ("sentiment", 0, 0),
    ("nli", 2, 1), ("topic", 1, 1), ("nli", 1, 1), ("sentiment", 1, 0),
]


class TaskAccuracy:
    def __init__(self, accelerator):
        self.accelerator = accelerator
        self.counts = {task: torch.zeros(2, NUM_CLASSES[task]) for task in sorted(NUM_CLASSES)}

    def update(self, task, label, predicted):
        counts = self.counts[task]
        counts[0, label] += float(label == predicted)
        counts[1, label] += 1.0

    def per_task(self):
        totals = self.accelerator.reduce(self.counts, reduction="sum")
        return {
            task: round((c[0].sum() / c[1].sum()).item(), 3)
            for task, c in totals.items()
            if c[1].sum() > 0
        }


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
