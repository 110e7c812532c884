# verify: error
"""Token predictions padded across processes on the sequence axis, gathered with uneven batch sizes.

Modelled on Chris-hughes10/pytorch-accelerated#53
(https://github.com/Chris-hughes10/pytorch-accelerated/pull/53), where a distributed evaluation in
which one process holds fewer samples in its last batch freezes in the trainer's `gather` unless
the tensors are padded first, and on huggingface/accelerate#167
(https://github.com/huggingface/accelerate/issues/167), where predictions padded per batch to the
batch's longest sentence hang in `gather` and the answer is `pad_across_processes` (the
token-classification example pads with `dim=1`).

Here the evaluation rows are divided with `split_between_processes` (4 and 3 sentences, no
padding), batched by 2 and padded in the collate function to the batch's longest sentence. The
loop copies the example's `accelerator.pad_across_processes(preds, dim=1, pad_index=-100)`, which
evens out the sentence length, but the batch axis differs at the second batch (2 rows on process
0, 1 on process 1), and `accelerator.gather` allocates its buckets from each process's own shape.
"""
import torch
import torch.nn as nn
from accelerate import Accelerator

VOCAB, TAGS = 12, 3
SENTENCES = [
    [1, 4, 5],
    [2, 7, 7, 3, 9],
    [3, 1],
    [8, 8, 2, 6],
    [5, 6, 10, 11, 2, 1],
    [9, 3, 4],
    [4, 2, 2, 7],
]
TAGS_OF = [[t % TAGS for t in s] for s in SENTENCES]


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 8, padding_idx=0)
        self.out = nn.Linear(8, TAGS)

    def forward(self, ids):
        return self.out(self.emb(ids))


def collate(rows):
    longest = max(len(ids) for ids, _ in rows)
    ids = torch.zeros(len(rows), longest, dtype=torch.long)
    tags = torch.full((len(rows), longest), -100, dtype=torch.long)
    for i, (s, t) in enumerate(rows):
        ids[i, : len(s)] = torch.tensor(s)
        tags[i, : len(t)] = torch.tensor(t)
    return ids, tags


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = accelerator.prepare(Tagger())
    model.eval()
    correct = total = 0
    with accelerator.split_between_processes(list(zip(SENTENCES, TAGS_OF))) as mine:
        for start in range(0, len(mine), 2):
            ids, tags = collate(mine[start : start + 2])
            with torch.no_grad():
                preds = model(ids).argmax(-1)
            preds = accelerator.pad_across_processes(preds, dim=1, pad_index=-100)
            tags = accelerator.pad_across_processes(tags, dim=1, pad_index=-100)
            preds = accelerator.gather(preds)  # expect: BCL015
            tags = accelerator.gather(tags)
            keep = tags != -100
            correct += int((preds[keep] == tags[keep]).sum())
            total += int(keep.sum())
    if accelerator.is_main_process:
        print(f"token accuracy {correct / total:.3f}")
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
