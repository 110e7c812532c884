# verify: ok
"""Hand fix: every batch returns a loss, logits and labels; an unlabelled batch's loss is 0.

Modelled on https://github.com/huggingface/optimum-graphcore/pull/77 ("Check if loss is none in
evaluation loop": evaluation examples without labels produce no loss). The override returns
`(None, logits, None)` for a batch whose labels are all -100. `Trainer.evaluation_loop` gathers
the loss, the logits and the labels of each batch only where they are not None, so on the process
whose second batch is unlabelled (rows 6 and 7 go to process 1) the gathers fall out of step:
process 1's collectives for the logits meet process 0's gather of the loss.
"""
import os
import shutil
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import Dataset
from transformers import Trainer, TrainingArguments

OUT_DIR = os.path.join(
    tempfile.gettempdir(), f"blind32-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-run"
)


class Clips(Dataset):
    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(8, 4, generator=g)
        self.labels = torch.tensor([0, 1, 1, 0, 2, 1, -100, -100])  # the last two clips are unannotated

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"x": self.x[i], "labels": self.labels[i]}


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(4, 3)

    def forward(self, x, labels=None):
        return self.head(x)


class ClipTrainer(Trainer):
    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        inputs = self._prepare_inputs(inputs)
        labels = inputs["labels"]
        with torch.no_grad():
            logits = model(inputs["x"])
        scored = (labels != -100).sum().clamp(min=1)
        loss = F.cross_entropy(logits, labels, ignore_index=-100, reduction="sum") / scored
        return loss, logits, labels


def accuracy(p):
    keep = p.label_ids != -100
    return {"accuracy": float((np.argmax(p.predictions, -1)[keep] == p.label_ids[keep]).mean())}


def main():
    torch.manual_seed(0)
    args = TrainingArguments(
        output_dir=OUT_DIR, per_device_eval_batch_size=2, use_cpu=True, report_to="none",
        remove_unused_columns=False, ddp_backend="gloo",
    )
    trainer = ClipTrainer(model=Classifier(), args=args, eval_dataset=Clips(), compute_metrics=accuracy)
    metrics = trainer.evaluate()
    if trainer.is_world_process_zero():
        print(metrics)
    trainer.accelerator.wait_for_everyone()
    if trainer.is_world_process_zero():
        shutil.rmtree(OUT_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
