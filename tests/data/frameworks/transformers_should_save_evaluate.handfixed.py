"""Every rank evaluates (Trainer.evaluate() is collective); only the process that saves, the one
where `args.should_save` is true, writes the metrics beside the model."""
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
    metrics = trainer.evaluate()
    if args.should_save:
        with open(os.path.join(args.output_dir, "eval.json"), "w") as out:
            json.dump(metrics, out)


if __name__ == "__main__":
    main()
