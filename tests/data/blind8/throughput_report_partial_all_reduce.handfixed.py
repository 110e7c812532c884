# verify: ok
"""Hand-fixed twin of throughput_report_partial_all_reduce.py.

The reporter counts the tokens of all processes: each step's count is summed with
`fabric.all_reduce` on every process before it is added, so the count, and with it the choice
of the steps at which the timing figures are reduced, is the same everywhere.
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
        step_tokens = self.reduce(torch.tensor([float(tokens)]))
        self.tokens += int(step_tokens.item())
        if self.tokens < self.next_report:
            return None
        self.next_report += self.every
        elapsed = self.reduce(torch.tensor([time.perf_counter() - self.start]))
        return self.tokens / max(elapsed.item(), 1e-9)


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
