# verify: ok
"""Look-alike: the same `set_seed(..., device_specific=True)` and per-process `random.random()`
draw, but the draw only decides a local jitter of the batch; the cross-device gather runs at every
step on every process.
"""
import os
import random

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed

SEED = 42
MIX_P = 0.5
STEPS = 4


def main():
    accelerator = Accelerator(cpu=True)
    set_seed(SEED, device_specific=True)  # a different augmentation stream per process
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = accelerator.prepare(model, opt)
    gen = torch.Generator().manual_seed(SEED + accelerator.process_index)
    for step in range(STEPS):
        x = torch.randn(4, 4, generator=gen)
        y = torch.randn(4, 2, generator=gen)
        if random.random() < MIX_P:
            x = x + 0.1 * torch.randn(x.shape, generator=gen)
        pool = accelerator.gather(x)
        x = 0.5 * x + 0.5 * pool.flip(0)[: len(x)]
        loss = ((model(x) - y) ** 2).mean()
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
    accelerator.print("done")
    accelerator.wait_for_everyone()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
