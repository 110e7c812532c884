# verify: ok
"""Look-alike: a patience counter over this process's own loss, beside FSDP's gradient clipping.

Like `fsdp_clip_after_local_loss_rise_patience`, each process counts how many steps in a row its
own batch loss has risen, and process 1's drifting targets make the counter reach `PATIENCE` at
step 5, process 0's at step 7. Here the counter only decides whether this process prints a warning;
`model.clip_grad_norm_` (an all-reduce across the processes) runs at every step on every process.
"""
import math

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

STEPS, BATCH, PATIENCE, MAX_NORM = 8, 4, 2, 1.0


def shard(rank, world):
    g = torch.Generator().manual_seed(2)
    rows = STEPS * BATCH * world
    x = torch.randn(rows, 6, generator=g)
    drift = torch.tensor([1.0 + (i % 2) * (i // 2) * 0.4 for i in range(rows)])
    y = x[:, :2].sum(dim=1, keepdim=True) * drift[:, None]
    return x[rank::world], y[rank::world]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    model = FSDP(net, device_id=torch.device("cpu"))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02)
    x, y = shard(rank, world)
    previous, rises, warned = math.inf, 0, False
    for step in range(STEPS):
        rows = slice(step * BATCH, (step + 1) * BATCH)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x[rows]), y[rows])
        loss.backward()
        value = loss.item()
        rises = rises + 1 if value > previous else 0
        previous = value
        if rises >= PATIENCE and not warned:
            print(f"process {rank}: loss rising for {rises} steps at step {step}", flush=True)
            warned = True
        model.clip_grad_norm_(MAX_NORM)
        optimizer.step()
    print(f"process {rank}: last loss {previous:.3f}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
