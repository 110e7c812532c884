# verify: ok
"""Gradient accumulation by labelled rows, through a context manager over `no_sync`.

Hand fix: the context manager counts the labelled rows of all processes (`accelerator.reduce`, sum)
against a target of 8 per process, so every process synchronises at the same backward.


Modelled on https://github.com/verl-project/verl/issues/6176: each rank decided its own
micro-batching from its own token counts, so the ranks entered different numbers of gradient
collectives and the job hung.

`accumulation(accelerator, model, meter, rows)` adds this batch's labelled rows to a running count
and yields True (gradients are synchronised in this backward, then the optimizer steps) once 8
labelled rows have been seen, otherwise it runs the backward inside `accelerator.no_sync(model)`.
Rows labelled -100 are dropped before the loss.  Process 0's four batches have 4 labelled rows
each (it synchronises at its 2nd and 4th backward); process 1's have 4, 3, 4, 3 (it synchronises
only at its 3rd), so process 0's last gradient all-reduce has no partner.
"""
import contextlib

import torch
import torch.nn.functional as F
from accelerate import Accelerator

TARGET_ROWS = 8


class RowMeter:
    def __init__(self):
        self.rows = 0


@contextlib.contextmanager
def accumulation(accelerator, model, meter, rows):
    meter.rows += int(accelerator.reduce(torch.tensor([rows]), reduction="sum").item())
    if meter.rows >= TARGET_ROWS * accelerator.num_processes:
        meter.rows = 0
        yield True
    else:
        with accelerator.no_sync(model):
            yield False


def shard_batches(process_index):
    g = torch.Generator().manual_seed(11 + process_index)
    batches = []
    for i in range(4):
        x = torch.randn(4, 3, generator=g)
        y = x.sum(dim=1)
        if process_index == 1 and i % 2 == 1:
            y[0] = -100  # an unlabelled row
        batches.append((x, y))
    return batches


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    model, opt = accelerator.prepare(model, opt)
    meter = RowMeter()
    updates = 0
    for x, y in shard_batches(accelerator.process_index):
        keep = y != -100
        with accumulation(accelerator, model, meter, int(keep.sum())) as step_now:
            loss = F.mse_loss(model(x[keep]).squeeze(1), y[keep])
            accelerator.backward(loss)
        if step_now:
            opt.step()
            opt.zero_grad()
            updates += 1
    accelerator.wait_for_everyone()
    print(f"process {accelerator.process_index}: {updates} updates")
    accelerator.end_training()


if __name__ == "__main__":
    main()
