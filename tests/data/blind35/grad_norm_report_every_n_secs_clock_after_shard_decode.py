# verify: error,hang
"""A gradient-norm report every N seconds of each process's own clock, through an all-reduce.

Modelled on https://github.com/facebookresearch/ParlAI/pull/3379 (`--log-every-n-secs` and the
other time-based criteria need a status synchronisation between all workers in distributed
training): the report fires when this process's clock says REPORT_SECS have passed since its
training clock started, and averages the global gradient norm with `dist.all_reduce`. The clock
starts after each process has decoded its own shard, and the compressed rows (every odd row) all
land in process 1's shard, so the two clocks start a second apart and the reports fire at
different steps: one process's all-reduce meets the other's DDP gradient all-reduce.
"""
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

ROWS = 32
STEPS = 30
REPORT_SECS = 1.0


def decode_shard(rank, world):
    rows = []
    for i in range(rank, ROWS, world):
        compressed = i % 2 == 1
        if compressed:
            time.sleep(0.12)  # inflating a compressed record
        g = torch.Generator().manual_seed(i)
        rows.append(torch.randn(5, generator=g))
    return torch.stack(rows)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(5, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    data = decode_shard(rank, world)
    target = data[:, :3] * 2

    last_report = time.monotonic()
    for step in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(data), target)
        loss.backward()
        opt.step()
        time.sleep(0.05)  # the rest of a step's work
        if time.monotonic() - last_report >= REPORT_SECS:
            norm = torch.stack([p.grad.norm() for p in model.parameters()]).norm()
            dist.all_reduce(norm)  # expect: BCL005
            print(f"step {step}: grad norm {norm.item() / world:.4f}")
            last_report = time.monotonic()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
