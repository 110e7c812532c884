# verify: hang,error
"""Heartbeat barrier whose interval each process calibrates from its own forward time.

Shape of pytorch/xla#1728 (https://github.com/pytorch/xla/pull/1728): a health check that
expects every worker's heartbeat in step, broken when the workers' timings are uneven. Here a
`fabric.barrier()` heartbeat is meant to run about every 0.2 s of training, and the number of
steps between heartbeats comes from a timed forward pass on this process's first batch. The
processes' shards hold documents of very different lengths, so one process heartbeats every
few steps and the other never, and its barrier meets the other's backward.
"""
import os
import time

import torch
from lightning.fabric import Fabric

HEARTBEAT_SECONDS = 0.2
SHARD_DOC_LENGTHS = [16, 4096]


def calibrate(model, batch):
    start = time.perf_counter()
    with torch.no_grad():
        for _ in range(5):
            model(batch)
    per_step = (time.perf_counter() - start) / 5
    return max(1, round(HEARTBEAT_SECONDS / per_step))


def main():
    fabric = Fabric(accelerator="cpu", strategy="ddp",
                    devices=int(os.environ.get("LOCAL_WORLD_SIZE", 1)))
    fabric.launch()
    length = SHARD_DOC_LENGTHS[fabric.global_rank % len(SHARD_DOC_LENGTHS)]
    g = torch.Generator().manual_seed(45 + fabric.global_rank)
    batches = [torch.randn(length, 512, generator=g) for _ in range(12)]
    model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.Tanh(), torch.nn.Linear(512, 1))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    model, opt = fabric.setup(model, opt)
    every = calibrate(model, batches[0])
    for step, x in enumerate(batches):
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        fabric.backward(loss)
        opt.step()
        if (step + 1) % every == 0:
            fabric.barrier()  # expect: BCL005
    print(f"heartbeat every {every} steps", flush=True)
    fabric.barrier()


if __name__ == "__main__":
    main()
