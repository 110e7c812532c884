# verify: ok
"""Look-alike: the same per-process packing (five rows on process 0, two on process 1), but
training is bounded by `max_steps=2`, not by an epoch.

Every process stops after two optimizer steps, which the shorter share still has, so DDP's
gradient all-reduces and the `Trainer`'s closing gathers meet one for one.
"""
import os
import tempfile

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader
from transformers import Trainer, TrainingArguments

PACK = 32
LENGTHS = [20, 10, 20, 10, 20, 10, 20, 10, 20, 10]  # even rows to process 0, odd rows to process 1
OUTPUT_DIR = os.path.join(tempfile.gettempdir(), f"blind22-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-packing")


def make_sequences():
    g = torch.Generator().manual_seed(0)
    return [torch.randint(1, 50, (n,), generator=g) for n in LENGTHS]


SEQUENCES = make_sequences()


def pack(sequences, capacity):
    rows, current = [], []
    for seq in sequences:
        if current and sum(len(s) for s in current) + len(seq) > capacity:
            rows.append(current)
            current = []
        current.append(seq)
    if current:
        rows.append(current)
    return rows


def collate(rows):
    input_ids = torch.zeros(len(rows), PACK, dtype=torch.long)
    labels = torch.full((len(rows), PACK), -100, dtype=torch.long)
    for i, row in enumerate(rows):
        flat = torch.cat(row)
        input_ids[i, : len(flat)] = flat
        labels[i, : len(flat)] = flat
    return {"input_ids": input_ids, "labels": labels}


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.head = nn.Linear(16, 50)

    def forward(self, input_ids, labels=None):
        logits = self.head(self.embed(input_ids))
        loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 50), labels[:, 1:].reshape(-1), ignore_index=-100)
        return {"loss": loss, "logits": logits}


class PackingTrainer(Trainer):
    def get_train_dataloader(self):
        rank, world = dist.get_rank(), dist.get_world_size()
        rows = pack(SEQUENCES[rank::world], PACK)
        return DataLoader(rows, batch_size=self.args.per_device_train_batch_size, collate_fn=collate)


def main():
    args = TrainingArguments(
        output_dir=OUTPUT_DIR,
        per_device_train_batch_size=1,
        max_steps=2,
        learning_rate=0.01,
        save_strategy="no",
        logging_strategy="no",
        report_to=[],
        use_cpu=True,
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    torch.manual_seed(0)
    trainer = PackingTrainer(model=TinyLM(), args=args, train_dataset=SEQUENCES)
    result = trainer.train()
    print(f"rank {dist.get_rank()}: {result.global_step} steps")


if __name__ == "__main__":
    main()
