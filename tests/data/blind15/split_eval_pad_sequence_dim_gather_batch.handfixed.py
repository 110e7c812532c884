# verify: ok
"""Hand-fixed `split_eval_pad_sequence_dim_gather_batch`: the batch axis is padded across processes too.

After the sentence axis, predictions and tags are padded across processes on the batch axis
(`dim=0`, pad value -100) before `accelerator.gather`, so every process hands the gather a tensor
of the same shape; the padded rows carry the tag -100 and drop out of the accuracy.
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
            preds = accelerator.pad_across_processes(preds, dim=0, pad_index=-100)
            tags = accelerator.pad_across_processes(tags, dim=0, pad_index=-100)
            preds = accelerator.gather(preds)
            tags = accelerator.gather(tags)
            keep = tags != -100
            correct += int((preds[keep] == tags[keep]).sum())
            total += int(keep.sum())
    if accelerator.is_main_process:
        print(f"token accuracy {correct / total:.3f}")
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
