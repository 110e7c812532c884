# verify: hang needs=transformers timeout=75
"""Metrics computed where the model is written, under `args.should_save` (true only on the process
that saves: global rank 0 unless save_on_each_node is set; huggingface/transformers#48569's review
calls the name confusing for exactly this reason). Trainer.evaluate() gathers every batch's loss
across ranks and runs on rank 0 alone (measured: rank 0 in all_gather, rank 1 done)."""
import json
import os
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from transformers import Trainer, TrainingArguments


class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def forward(self, x, labels=None):
        prediction = self.net(x)
        return {"loss": torch.nn.functional.mse_loss(prediction, labels), "logits": prediction}


def dataset(n):
    return [{"x": torch.randn(4), "labels": torch.randn(1)} for _ in range(n)]


def main():
    args = TrainingArguments(output_dir=tempfile.mkdtemp(), use_cpu=True, max_steps=2,
                             per_device_train_batch_size=4, per_device_eval_batch_size=4,
                             save_strategy="no", report_to="none", disable_tqdm=True)
    trainer = Trainer(model=Regressor(), args=args, train_dataset=dataset(16), eval_dataset=dataset(8))
    trainer.train()
    trainer.save_model()
    if args.should_save:
        metrics = trainer.evaluate()  # expect: BCL011
        with open(os.path.join(args.output_dir, "eval.json"), "w") as out:
            json.dump(metrics, out)


if __name__ == "__main__":
    main()
