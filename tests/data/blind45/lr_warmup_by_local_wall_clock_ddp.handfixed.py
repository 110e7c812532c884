# verify: ok check=W_SUM
"""Hand fix of lr_warmup_by_local_wall_clock_ddp.

The elapsed time that drives the warm-up is process 0's, broadcast to every process at each
step, so every replica applies the same learning rate. Modelled on openai/parameter-golf#48
(https://github.com/openai/parameter-golf/pull/48).
"""
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

WARMUP_SECONDS = 1.0
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
    for _ in range(10):
        x = torch.randn(16, 8, generator=g)
        loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        elapsed = torch.tensor([time.monotonic() - start])
        dist.broadcast(elapsed, src=0)
        scale = min(1.0, elapsed.item() / WARMUP_SECONDS)
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
