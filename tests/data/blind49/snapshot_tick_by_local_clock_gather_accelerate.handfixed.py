# verify: ok
"""Hand fix: a tick is taken when any process's clock says so, agreed with a sum over processes.

Sample-image snapshots taken on a wall-clock tick, each gathering every process's samples.

Modelled on https://github.com/NVlabs/stylegan3/issues/110: multi-GPU training hangs at the
"Export sample images" step. Here `SnapshotWriter.maybe_export` gathers the EMA generator's samples
from every process (`accelerator.gather`) when this process's own clock says a tick has passed.
Each process decodes its own shard, and the larger records take longer, so the processes count
different numbers of ticks and enter the gather a different number of times.
"""
import os
import time

import torch
from accelerate import Accelerator
from torch import nn


class SnapshotWriter:
    def __init__(self, accelerator, every_s):
        self.accelerator, self.every_s = accelerator, every_s
        self.last, self.exported = time.time(), 0

    def maybe_export(self, gen, z):
        due = torch.tensor([float(time.time() - self.last >= self.every_s)])
        if self.accelerator.reduce(due, reduction="sum").item() == 0.0:
            return
        with torch.no_grad():
            grid = self.accelerator.gather(gen(z))
        self.last, self.exported = time.time(), self.exported + 1
        if self.accelerator.is_main_process:
            print("exported grid", tuple(grid.shape), flush=True)


def decode(record):
    time.sleep(0.05 * record.numel() / 64)
    return record.reshape(-1, 4)


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    gen = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
    opt = torch.optim.Adam(gen.parameters(), 1e-2)
    gen, opt = accelerator.prepare(gen, opt)
    g = torch.Generator().manual_seed(60 + int(os.environ["RANK"]))
    sizes = [64 * int(n) for n in torch.randint(1, 6, (12,), generator=g)]
    writer, fixed_z = SnapshotWriter(accelerator, every_s=0.3), torch.randn(4, 2)
    for size in sizes:
        real = decode(torch.randn(size, generator=g))
        writer.maybe_export(gen, fixed_z)
        loss = (gen(torch.randn(real.size(0), 2)) - real).pow(2).mean()
        opt.zero_grad()
        accelerator.backward(loss)
        opt.step()
    print("exported", writer.exported, "decoded", sum(sizes), flush=True)
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
