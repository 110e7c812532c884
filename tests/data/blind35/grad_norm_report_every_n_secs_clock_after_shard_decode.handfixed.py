# verify: ok
"""Hand fix of grad_norm_report_every_n_secs_clock_after_shard_decode: each step the processes
agree (all-reduce MAX) on whether any clock says a report is due, so every process enters the
report's all-reduce at the same step.
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
        due = torch.tensor(float(time.monotonic() - last_report >= REPORT_SECS))
        dist.all_reduce(due, op=dist.ReduceOp.MAX)  # report when any clock says so
        if due.item() > 0:
            norm = torch.stack([p.grad.norm() for p in model.parameters()]).norm()
            dist.all_reduce(norm)
            print(f"step {step}: grad norm {norm.item() / world:.4f}")
            last_report = time.monotonic()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
