# verify: ok
"""Hand-fixed twin of hf_callback_predict_world_zero.py.

Every process calls `Trainer.predict()` (it gathers the predictions of every batch across
processes, so all of them must enter it); only the writing of the table is left to process zero
(the pattern the fix of huggingface/transformers#998,
https://github.com/huggingface/transformers/issues/998, and of
Lightning-AI/pytorch-lightning#16541 come to: collective on every rank, I/O on one).
"""
import json
import os
import tempfile

import torch
from torch import nn
from torch.utils.data import Dataset
from transformers import Trainer, TrainerCallback, TrainingArguments


class PairsDataset(Dataset):
    def __init__(self, n: int, seed: int, features: int = 6):
        gen = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, features, generator=gen)
        self.labels = (self.x.sum(dim=1) > 0).long()

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        return {"features": self.x[index], "labels": self.labels[index]}


class TinyClassifier(nn.Module):
    def __init__(self, features: int = 6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(features, 16), nn.ReLU(), nn.Linear(16, 2))

    def forward(self, features, labels=None):
        logits = self.net(features)
        out = {"logits": logits}
        if labels is not None:
            out["loss"] = nn.functional.cross_entropy(logits, labels)
        return out


class SamplePredictionsCallback(TrainerCallback):
    """After each evaluation, predict a few fixed samples everywhere and write them from process zero."""

    def __init__(self, samples: Dataset, out_dir: str):
        self.samples = samples
        self.out_dir = out_dir
        self.trainer = None

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        output = self.trainer.predict(self.samples)
        if not state.is_world_process_zero:
            return
        rows = [
            {"step": state.global_step, "pred": int(p.argmax()), "label": int(label)}
            for p, label in zip(output.predictions, output.label_ids)
        ]
        with open(os.path.join(self.out_dir, f"samples-{state.global_step}.json"), "w") as f:
            json.dump(rows, f)


def main():
    job = f"{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}"
    out_dir = os.path.join(tempfile.gettempdir(), f"blind6-hf-samples-{job}")
    os.makedirs(out_dir, exist_ok=True)
    args = TrainingArguments(
        output_dir=out_dir,
        per_device_train_batch_size=4,
        per_device_eval_batch_size=4,
        num_train_epochs=2,
        eval_strategy="epoch",
        save_strategy="no",
        logging_strategy="no",
        report_to=[],
        use_cpu=True,
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    callback = SamplePredictionsCallback(PairsDataset(8, seed=2), out_dir)
    trainer = Trainer(
        model=TinyClassifier(),
        args=args,
        train_dataset=PairsDataset(32, seed=0),
        eval_dataset=PairsDataset(16, seed=1),
        callbacks=[callback],
    )
    callback.trainer = trainer
    trainer.train()


if __name__ == "__main__":
    main()
