# verify: error
"""A start-up probe that resizes the position table when this process's longest row overflows it.

Modelled on huggingface/transformers#13559 (https://github.com/huggingface/transformers/pull/13559),
which added `resize_position_embeddings`: a learned position table grown to take longer inputs,
the new rows freshly initialised, after "IndexError: index out of range in self" on long rows.

Here the set-up runs the model once on this process's longest rows before wrapping it; if the
position embedding raises `IndexError`, the table is grown to the next multiple of 16 and the probe
retried. Rows are dealt out by a strided split; the two long rows (20 and 24 tokens) are odd rows, so
only process 1 grows its table from 16 to 32 positions. DDP's start-up check then finds
a `pos.weight` of 16 x 8 on one process and 32 x 8 on the other.
"""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

VOCAB, DIM, MAX_POS = 30, 8, 16


class TinyEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Embedding(MAX_POS, DIM)
        self.head = nn.Linear(DIM, 2)

    def forward(self, ids):
        h = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
        return self.head(h.mean(dim=1))


def make_rows():
    g = torch.Generator().manual_seed(0)
    lengths = [12, 10, 8, 20, 14, 9, 11, 24, 6, 13, 15, 7]
    return [(torch.randint(1, VOCAB, (n,), generator=g), n % 2) for n in lengths]


def grow_positions(model, n):
    old = model.pos.weight.data
    new = nn.Embedding(n, DIM)
    with torch.no_grad():
        new.weight[: old.shape[0]] = old
    model.pos = new


def probe(model, rows):
    longest = max(rows, key=lambda r: len(r[0]))[0]
    while True:
        try:
            model(longest.unsqueeze(0))
            return
        except IndexError:
            grow_positions(model, (len(longest) // 16 + 1) * 16)  # expect: BCL015


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    rows = make_rows()[rank::world]
    torch.manual_seed(0)
    model = TinyEncoder()
    probe(model, rows)
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for ids, label in rows:
        loss = F.cross_entropy(ddp(ids.unsqueeze(0)), torch.tensor([label]))
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
