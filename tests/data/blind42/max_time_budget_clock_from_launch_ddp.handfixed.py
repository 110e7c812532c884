# verify: ok
"""Hand fix of max_time_budget_clock_from_launch_ddp: each step the processes agree on the elapsed
time (`all_reduce` with `MAX`), so the learning rate and the decision to stop are the same on every
process, as Lightning's Timer does by broadcasting its decision.

Modelled on https://github.com/chensjtu/GaussianObject/issues/20.
"""
import math
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

PARTS = ["part-00000", "part-00001", "part-00002"]
MAX_SECONDS = 5.0
BASE_LR = 0.05


def fetch(name):
    time.sleep(1.2)  # object-store latency for one part
    g = torch.Generator().manual_seed(int(name[-5:]))
    x = torch.randn(256, 16, generator=g)
    return x, x.sum(1, keepdim=True)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    parts = [fetch(p) for p in PARTS[rank::world]]
    x = torch.cat([p[0] for p in parts])
    y = torch.cat([p[1] for p in parts])
    start = time.monotonic()  # the budget counts from when this process's data is ready
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=BASE_LR)
    step = 0
    while True:
        clock = torch.tensor([time.monotonic() - start])
        dist.all_reduce(clock, op=dist.ReduceOp.MAX)
        elapsed = clock.item()
        if elapsed > MAX_SECONDS:
            break
        for group in opt.param_groups:
            group["lr"] = BASE_LR * 0.5 * (1 + math.cos(math.pi * elapsed / MAX_SECONDS))
        idx = torch.randint(0, len(x), (32,))
        loss = torch.nn.functional.mse_loss(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
    print(f"process {rank}: {step} steps in {elapsed:.2f} s")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
