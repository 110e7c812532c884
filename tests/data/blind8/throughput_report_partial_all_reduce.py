# verify: hang
"""A throughput reporter that syncs its numbers each time this process has read another N tokens.

Modelled on foundation-model-stack/foundation-model-stack#213 ("Since we report every `seconds`
seconds, but now introduce a dist.barrier via all_reduce, in any case where the current time
doesn't exactly match across hosts there can be a deadlock") and meta-pytorch/torcheval#156
(a throughput metric synced only "once in a while").

    https://github.com/foundation-model-stack/foundation-model-stack/pull/213
    https://github.com/meta-pytorch/torcheval/issues/156

`ThroughputReporter` gets its reduction as a plain callable, `functools.partial(fabric.all_reduce,
reduce_op="sum")`, and calls it whenever the tokens this process has read pass the next
multiple of `REPORT_EVERY_TOKENS`. Fabric's sampler gives process 0 the even rows (short
sequences, 5 tokens a batch, 15 in all) and process 1 the odd ones (17 a batch): process 1
reports after its first step, while process 0 goes on into the next step's backward.
"""
import functools
import time

import torch
import torch.nn.functional as F
from lightning.fabric import Fabric
from torch import nn
from torch.utils.data import DataLoader

VOCAB, REPORT_EVERY_TOKENS = 16, 16
LENGTHS = [3, 9, 2, 8, 3, 9, 2, 8, 3, 9, 2, 8]


def make_rows():
    return [([(i + j) % (VOCAB - 1) + 1 for j in range(n)], float(n % 3)) for i, n in enumerate(LENGTHS)]


def pad_batch(rows):
    longest = max(len(ids) for ids, _ in rows)
    ids = torch.zeros(len(rows), longest, dtype=torch.long)
    for r, (tokens, _) in enumerate(rows):
        ids[r, : len(tokens)] = torch.tensor(tokens)
    return ids, torch.tensor([target for _, target in rows])


class ThroughputReporter:
    def __init__(self, reduce, every_tokens):
        self.reduce, self.every = reduce, every_tokens
        self.tokens, self.next_report, self.start = 0, every_tokens, time.perf_counter()

    def update(self, tokens):
        self.tokens += tokens
        if self.tokens < self.next_report:
            return None
        self.next_report += self.every
        stats = torch.tensor([float(self.tokens), time.perf_counter() - self.start])
        total = self.reduce(stats)  # expect: BCL011
        return total[0].item() / max(total[1].item(), 1e-9)


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    fabric.seed_everything(0)
    model = nn.Sequential(nn.EmbeddingBag(VOCAB, 4, mode="mean"), nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model, optimizer = fabric.setup(model, optimizer)
    loader = fabric.setup_dataloaders(DataLoader(make_rows(), batch_size=2, collate_fn=pad_batch))
    reporter = ThroughputReporter(functools.partial(fabric.all_reduce, reduce_op="sum"), REPORT_EVERY_TOKENS)
    for step, (ids, target) in enumerate(loader):
        loss = F.mse_loss(model(ids).squeeze(-1), target)
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        rate = reporter.update(int((ids != 0).sum()))
        if rate is not None:
            fabric.print(f"step {step}: {rate:.0f} tokens/s across processes")
    fabric.barrier()
    fabric.print("done")


if __name__ == "__main__":
    main()
