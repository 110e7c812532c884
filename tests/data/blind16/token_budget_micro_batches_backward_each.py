# verify: hang
"""Micro-batches cut from the process's own batch by a token budget, each with its own backward.

Modelled on GMISWE/tinker-cloud#30 ("fix sub-DP forward_backward deadlock": the number of
micro-steps was derived on each rank from that rank's local samples, "so an unbalanced split
makes the ranks disagree on how many micro-steps to run and they block on the per-step gradient
collective"): `micro_batches` packs the rows of the process's batch into chunks of at most
`TOKEN_BUDGET` padded tokens, and every chunk runs `fabric.backward` (DDP's gradient all-reduce).
Process 1's first batch holds the two long sequences: 2 chunks against process 0's 1.
"""
import lightning as L
import torch
from torch import nn

VOCAB, TOKEN_BUDGET = 20, 16
LENGTHS = [5, 10, 6, 10, 4, 3, 5, 4]


def sequences():
    g = torch.Generator().manual_seed(0)
    return [torch.randint(1, VOCAB, (n,), generator=g) for n in LENGTHS]


def micro_batches(rows):
    chunk, longest = [], 0
    for row in sorted(rows, key=len):
        if chunk and max(longest, len(row)) * (len(chunk) + 1) > TOKEN_BUDGET:
            yield chunk
            chunk, longest = [], 0
        chunk.append(row)
        longest = max(longest, len(row))
    if chunk:
        yield chunk


def pad(rows):
    return nn.utils.rnn.pad_sequence(rows, batch_first=True)


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 8)
        self.head = nn.Linear(8, VOCAB)

    def forward(self, ids):
        return self.head(self.embed(ids))


def main():
    fabric = L.Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    fabric.seed_everything(0)
    model = TinyLM()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = fabric.setup(model, opt)
    mine = sequences()[fabric.global_rank::fabric.world_size]
    for step in range(0, len(mine), 2):
        batch = mine[step:step + 2]
        opt.zero_grad()
        for chunk in micro_batches(batch):
            ids = pad(chunk)
            logits = model(ids[:, :-1])
            loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1), ignore_index=0)
            fabric.backward(loss * len(chunk) / len(batch))  # expect: BCL011
        opt.step()
        fabric.print(f"step {step // 2} done")


if __name__ == "__main__":
    main()
