# verify: ok
"""Hand fix of infonce_hard_negative_count_gather_rows: gather the row counts, pad, gather, trim.

Modelled on modelscope/ms-swift#7202 (https://github.com/modelscope/ms-swift/issues/7202) and
modelscope/ms-swift#9179 (https://github.com/modelscope/ms-swift/pull/9179), whose gather of the
sentence embeddings first all-gathers every process's shape and allocates each bucket with that
shape. Here every process all-gathers its row count, pads its embedding matrix (and its row
kinds) to the largest count, all-gathers the padded matrices and cuts each process's padding off
again; the process's own rows sit at the sum of the counts before it.
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
    name = f"blind17-infonce-fixed-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}"
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
            count = torch.tensor([emb.shape[0]])
            counts = [torch.zeros_like(count) for _ in range(world)]
            dist.all_gather(counts, count)
            counts = [int(c) for c in counts]
            longest = max(counts)
            padded = F.pad(emb.detach(), (0, 0, 0, longest - emb.shape[0]))
            padded_kinds = F.pad(kinds, (0, longest - kinds.shape[0]), value=-1)
            buckets = [torch.zeros_like(padded) for _ in range(world)]
            kind_buckets = [torch.zeros_like(padded_kinds) for _ in range(world)]
            dist.all_gather(buckets, padded.contiguous())
            dist.all_gather(kind_buckets, padded_kinds)
            buckets = [b[:n] for b, n in zip(buckets, counts)]
            buckets[rank] = emb  # keep the gradient of this process's own rows
            all_emb = torch.cat(buckets)
            all_kinds = torch.cat([k[:n] for k, n in zip(kind_buckets, counts)])
            offset = sum(counts[:rank])
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
