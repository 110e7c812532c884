# verify: hang
"""A Trainer subclass whose prediction_step returns (None, None, None) for a batch with no labels.

Modelled on huggingface/transformers#19919 (https://github.com/huggingface/transformers/issues/19919)
(evaluation stops making progress on multi-GPU after `prediction_step` was overridden) and
huggingface/transformers#39736 (https://github.com/huggingface/transformers/issues/39736). The
evaluation loop gathers the loss, the logits and the labels of a batch only when they are not None.
The override skips batches whose labels are all -100 ("nothing to score"); with sequential eval
batches of 2 dealt alternately, the unlabelled rows 6 and 7 form rank 1's second batch, so rank 1
gathers fewer times than rank 0.
"""
import os
import tempfile

import torch
from transformers import Trainer, TrainingArguments

LABELS = [0, 1, 1, 0, 2, 1, -100, -100]


class Rows(torch.utils.data.Dataset):
    def __len__(self):
        return len(LABELS)

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return {"x": torch.randn(4, generator=g), "labels": torch.tensor(LABELS[i])}


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x, labels=None):
        logits = self.fc(x)
        loss = torch.nn.functional.cross_entropy(logits, labels, ignore_index=-100)
        return {"loss": loss, "logits": logits}


class ScoredOnlyTrainer(Trainer):
    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        if (inputs["labels"] == -100).all():
            return None, None, None  # expect: BCL011
        return super().prediction_step(model, inputs, prediction_loss_only, ignore_keys=ignore_keys)


def main():
    out = os.path.join(tempfile.gettempdir(), f"blind10-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}")
    args = TrainingArguments(
        output_dir=out, per_device_eval_batch_size=2, use_cpu=True, report_to=[],
        label_names=["labels"], disable_tqdm=True,
    )
    torch.manual_seed(0)
    trainer = ScoredOnlyTrainer(model=Classifier(), args=args, eval_dataset=Rows())
    metrics = trainer.evaluate()
    if trainer.is_world_process_zero():
        print(metrics)


if __name__ == "__main__":
    main()
