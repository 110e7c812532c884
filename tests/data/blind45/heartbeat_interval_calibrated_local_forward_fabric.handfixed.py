# verify: ok
"""Hand fix of heartbeat_interval_calibrated_local_forward_fabric.

The calibrated per-step time is reduced with `max` across processes
(`fabric.all_reduce(..., reduce_op="max")`), so every process derives the same heartbeat
interval. Modelled on pytorch/xla#1728 (https://github.com/pytorch/xla/pull/1728).
"""
import os
import time

import torch
from lightning.fabric import Fabric

HEARTBEAT_SECONDS = 0.2
SHARD_DOC_LENGTHS = [16, 4096]


def calibrate(fabric, model, batch):
    start = time.perf_counter()
    with torch.no_grad():
        for _ in range(5):
            model(batch)
    per_step = torch.tensor((time.perf_counter() - start) / 5)
    per_step = fabric.all_reduce(per_step, reduce_op="max").item()
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
    every = calibrate(fabric, model, batches[0])
    for step, x in enumerate(batches):
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        fabric.backward(loss)
        opt.step()
        if (step + 1) % every == 0:
            fabric.barrier()
    print(f"heartbeat every {every} steps", flush=True)
    fabric.barrier()


if __name__ == "__main__":
    main()
