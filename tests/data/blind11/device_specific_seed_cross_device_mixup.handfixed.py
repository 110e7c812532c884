# verify: ok
"""Hand fix: the mixup decision comes from its own `random.Random(SEED)`, the same stream on every
process; the device-specific seed still drives everything else.

Broken version: cross-device mixup chosen by `random.random()` after `set_seed(..., device_specific=True)`.

Shape of huggingface/accelerate#236 (https://github.com/huggingface/accelerate/issues/236) and
#266 (https://github.com/huggingface/accelerate/pull/266), which added `device_specific=True` so
that each process draws different augmentations (the seed becomes `seed + process_index`). The
same per-process `random` stream here also decides whether a step mixes its batch with the
batches of the other processes (`accelerator.gather`): seed 42 and seed 43 decide differently at
the first step, and the lone gather meets the other process's gradient all-reduce.
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
    mix_rng = random.Random(SEED)  # shared: every process mixes at the same steps
    gen = torch.Generator().manual_seed(SEED + accelerator.process_index)
    for step in range(STEPS):
        x = torch.randn(4, 4, generator=gen)
        y = torch.randn(4, 2, generator=gen)
        if mix_rng.random() < MIX_P:
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
