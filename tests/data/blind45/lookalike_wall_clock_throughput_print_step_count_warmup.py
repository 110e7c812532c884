# verify: ok check=W_SUM
"""Look-alike: a wall clock read every step, feeding only a throughput print.

Each process times its own steps from a clock started once its shard is loaded (the second
shard is slower), but the warm-up counts optimizer steps, the same on every process; the clock
only feeds a samples-per-second line.
"""
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

WARMUP_STEPS = 6
SHARD_LOAD_SECONDS = [0.05, 0.5]
W_SUM = None


def main():
    global W_SUM
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 1))
    time.sleep(SHARD_LOAD_SECONDS[dist.get_rank() % len(SHARD_LOAD_SECONDS)])  # load this shard
    start = time.monotonic()  # training starts once this process's data is ready
    g = torch.Generator().manual_seed(7)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        x = torch.randn(16, 8, generator=g)
        loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        scale = min(1.0, (step + 1) / WARMUP_STEPS)
        rate = 16 * (step + 1) / (time.monotonic() - start)
        print(f"{rate:.0f} samples/s", flush=True)
        for group in opt.param_groups:
            group["lr"] = 0.1 * scale
        opt.step()
        time.sleep(0.02)
    W_SUM = round(sum(p.sum().item() for p in model.parameters()), 3)
    print("W_SUM", W_SUM, flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
