"""Every rank runs the evaluation (Trainer.evaluate() gathers across ranks); only the main process
prints the result."""
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
    metrics = trainer.evaluate()
    if trainer.is_world_process_zero():
        print("eval loss", metrics["eval_loss"])


if __name__ == "__main__":
    main()
