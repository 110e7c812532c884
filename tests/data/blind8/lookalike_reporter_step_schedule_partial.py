# verify: ok
"""Look-alike of throughput_report_partial_all_reduce.py: the same reporter and partial, fired on a shared step count.

The reporter still receives `functools.partial(fabric.all_reduce, reduce_op="sum")` and each
process still adds its own token count, but it reduces every `REPORT_EVERY_STEPS` calls, and
every process calls it once per step over the same number of steps (Fabric's sampler gives each
process 3 batches), so all of them reduce at the same steps.
"""
import functools
import time

import torch
import torch.nn.functional as F
from lightning.fabric import Fabric
from torch import nn
from torch.utils.data import DataLoader

VOCAB, REPORT_EVERY_STEPS = 16, 2
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
    def __init__(self, reduce, every_steps):
        self.reduce, self.every = reduce, every_steps
        self.tokens, self.calls, self.start = 0, 0, time.perf_counter()

    def update(self, tokens):
        self.tokens += tokens
        self.calls += 1
        if self.calls % self.every:
            return None
        stats = torch.tensor([float(self.tokens), time.perf_counter() - self.start])
        total = self.reduce(stats)
        return total[0].item() / max(total[1].item(), 1e-9)


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    fabric.seed_everything(0)
    model = nn.Sequential(nn.EmbeddingBag(VOCAB, 4, mode="mean"), nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model, optimizer = fabric.setup(model, optimizer)
    loader = fabric.setup_dataloaders(DataLoader(make_rows(), batch_size=2, collate_fn=pad_batch))
    reporter = ThroughputReporter(functools.partial(fabric.all_reduce, reduce_op="sum"), REPORT_EVERY_STEPS)
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
