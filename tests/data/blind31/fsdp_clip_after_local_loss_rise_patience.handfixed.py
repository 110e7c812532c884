# verify: ok
"""Hand fix: the patience counter reads the loss averaged over the processes (an all-reduce),
so every process switches clipping on at the same step.

Switch gradient clipping on after the loss has risen for `PATIENCE` steps, on an FSDP model.

Modelled on https://github.com/TRI-ML/prismatic-vlms/issues/35: a training run stuck in
`clip_grad_norm_` of a `FullyShardedDataParallel` model, whose method all-reduces the norms of
the gradient shards across the ranks before it scales them.

The trigger is a patience counter over this process's own batch loss: once the loss has gone up
`PATIENCE` steps in a row, clipping stays on. The shard of process 1 holds targets whose scale
grows with the row index (a drifting sensor), so its loss rises for the second time in a row at
step 5, two steps before process 0's does. Only process 1 enters the clipping all-reduce there;
process 0 goes on to the next forward, whose FSDP all-gather of the parameters is not the
collective process 1 waits in.
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
    previous, rises, clipping = math.inf, 0, False
    for step in range(STEPS):
        rows = slice(step * BATCH, (step + 1) * BATCH)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x[rows]), y[rows])
        loss.backward()
        mean_loss = loss.detach().clone()
        dist.all_reduce(mean_loss)
        value = mean_loss.item() / world
        rises = rises + 1 if value > previous else 0
        previous = value
        if rises >= PATIENCE:
            clipping = True
        if clipping:
            model.clip_grad_norm_(MAX_NORM)
        optimizer.step()
    print(f"process {rank}: clipping={clipping}, last loss {previous:.3f}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
