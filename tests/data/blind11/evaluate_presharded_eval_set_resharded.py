# verify: hang
"""Each process hands `Trainer` its own share of the evaluation set, which the Trainer shards again.

Shape of huggingface/accelerate#4062 (https://github.com/huggingface/accelerate/issues/4062) and
#4201 (https://github.com/huggingface/accelerate/pull/4201): a dataset already split by rank is
split a second time by the data loader that Accelerate prepares, which assumes every process
holds the whole dataset. The 9 evaluation rows are dealt `ROWS[rank::world]` (5 and 4); the
Trainer then gives process 0 every other batch of its 5 rows (3 batches of 1) and process 1 every
other batch of its 4 (2 batches), and `evaluate()` gathers once per batch.
"""
import os
import tempfile

import torch
from torch.utils.data import Dataset
from transformers import Trainer, TrainingArguments

ROWS = [([0.1 * i, 1.0 - 0.1 * i], i % 2) for i in range(9)]


class Rows(Dataset):
    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        feats, label = self.rows[i]
        return {"x": torch.tensor(feats), "labels": label}


class TinyClassifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    def forward(self, x, labels=None):
        logits = self.linear(x)
        loss = None if labels is None else torch.nn.functional.cross_entropy(logits, labels)
        return {"loss": loss, "logits": logits}


def main():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    out = os.path.join(tempfile.gettempdir(), f"blind11-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-eval")
    args = TrainingArguments(output_dir=out, per_device_eval_batch_size=1, report_to=[], use_cpu=True)
    torch.manual_seed(0)
    trainer = Trainer(model=TinyClassifier(), args=args, eval_dataset=Rows(ROWS[rank::world]))
    metrics = trainer.evaluate()  # expect: BCL011
    if trainer.is_world_process_zero():
        print(metrics, flush=True)


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
