# verify: error
"""In-batch InfoNCE across devices whose gather assumes every process embeds as many rows.

Modelled on modelscope/ms-swift#7202 (https://github.com/modelscope/ms-swift/issues/7202),
"embedding training with batch size > 1 and our own negative samples errors, in-batch sampling
alone works", and the review of modelscope/ms-swift#9179
(https://github.com/modelscope/ms-swift/pull/9179): the labels were gathered into
`new_empty_like(labels)` buckets, "which assumes that labels have the same shape across all
ranks. If the number of samples or negatives varies per rank, this will cause a hang or crash".

A transformers `Trainer` subclass computes an InfoNCE loss in `compute_loss`: every example
contributes its anchor, its positive and its own hard negatives (zero to two of them) as rows of
one embedding matrix, and the matrix is all-gathered into `torch.zeros_like(emb)` buckets so that
each anchor is scored against the positives and negatives of every process.

Where the ranks part ways: the number of rows a process embeds is the number of examples plus
their hard negatives. With `train_sampling_strategy="sequential"` the prepared dataloader deals
batch 0 (rows 0 and 1: one negative each, 6 embeddings) to process 0 and batch 1 (rows 2 and 3:
two negatives and one, 7 embeddings) to process 1, so the gather meets a 6x16 matrix on one
process and a 7x16 one on the other, and gloo aborts at the first step.
"""
import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset
from transformers import Trainer, TrainingArguments

VOCAB = 50
DIM = 16
TEMPERATURE = 0.05

# (anchor tokens, positive tokens, [hard negative tokens, ...]); every text is 4 token ids
ROWS = [
    ([1, 2, 3, 4], [1, 2, 3, 5], [[9, 9, 8, 7]]),
    ([5, 6, 7, 8], [5, 6, 7, 9], [[1, 1, 2, 2]]),
    ([10, 11, 12, 13], [10, 11, 12, 14], [[20, 21, 22, 23], [30, 31, 32, 33]]),
    ([14, 15, 16, 17], [14, 15, 16, 18], [[3, 4, 5, 6]]),
    ([20, 22, 24, 26], [20, 22, 24, 28], [[40, 41, 42, 43]]),
    ([21, 23, 25, 27], [21, 23, 25, 29], []),
    ([30, 32, 34, 36], [30, 32, 34, 38], [[11, 12, 13, 14], [44, 45, 46, 47]]),
    ([31, 33, 35, 37], [31, 33, 35, 39], [[6, 7, 8, 9]]),
]


def run_dir():
    name = f"blind17-infonce-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}"
    return os.path.join(tempfile.gettempdir(), name)


class Triplets(Dataset):
    def __len__(self):
        return len(ROWS)

    def __getitem__(self, i):
        anchor, positive, negatives = ROWS[i]
        return {"anchor": anchor, "positive": positive, "negatives": negatives}


def collate(examples):
    """Anchor, positive, then the example's own negatives, example after example."""
    texts, kinds = [], []
    for ex in examples:
        texts += [ex["anchor"], ex["positive"], *ex["negatives"]]
        kinds += [0, 1] + [2] * len(ex["negatives"])
    return {"input_ids": torch.tensor(texts), "kinds": torch.tensor(kinds)}


class BagEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(VOCAB, DIM, mode="mean")
        self.proj = nn.Linear(DIM, DIM)

    def forward(self, input_ids, **unused):
        return F.normalize(self.proj(self.bag(input_ids)), dim=-1)


class InfoNCETrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        emb = model(inputs["input_ids"])
        kinds = inputs["kinds"]
        if dist.is_initialized() and dist.get_world_size() > 1:
            rank, world = dist.get_rank(), dist.get_world_size()
            buckets = [torch.zeros_like(emb) for _ in range(world)]
            dist.all_gather(buckets, emb.detach().contiguous())  # expect: BCL015
            buckets[rank] = emb  # keep the gradient of this process's own rows
            all_emb = torch.cat(buckets)
            all_kinds = kinds.repeat(world)
            offset = rank * emb.shape[0]
        else:
            all_emb, all_kinds, offset = emb, kinds, 0
        anchors = torch.nonzero(kinds == 0).squeeze(1)
        candidates = torch.nonzero(all_kinds != 0).squeeze(1)
        scores = emb[anchors] @ all_emb[candidates].T / TEMPERATURE
        # the positive of the anchor at local row i is local row i + 1
        target = torch.searchsorted(candidates, anchors + 1 + offset)
        loss = F.cross_entropy(scores, target)
        return (loss, {"scores": scores}) if return_outputs else loss


def main():
    args = TrainingArguments(
        output_dir=run_dir(),
        per_device_train_batch_size=2,
        max_steps=2,
        learning_rate=0.05,
        use_cpu=True,
        report_to=[],
        save_strategy="no",
        logging_steps=100,
        remove_unused_columns=False,
        train_sampling_strategy="sequential",
        disable_tqdm=True,
    )
    trainer = InfoNCETrainer(model=BagEncoder(), args=args, train_dataset=Triplets(), data_collator=collate)
    trainer.train()
    if trainer.is_world_process_zero():
        print("final loss", trainer.state.log_history[-1].get("train_loss"))


if __name__ == "__main__":
    main()
