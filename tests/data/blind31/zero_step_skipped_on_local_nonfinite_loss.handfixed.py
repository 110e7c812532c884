# verify: ok
"""Hand fix: the processes agree on skipping the step (an all-reduce of the flag, MAX).

Skip the optimizer step on a non-finite loss, with ZeroRedundancyOptimizer under DDP.

Modelled on https://github.com/facebookresearch/mmf/pull/1073 (a config option to skip the
optimizer update when a batch gives NaN or inf losses), closed by its author because "the
training hangs upon NaN losses when using optimizer state sharding".

Each process tests its own loss with `torch.isfinite` and `continue`s past `optimizer.step()`.
The loss is a per-process value: one corrupted target (row 13, inf) lands in the shard of one
process only. `ZeroRedundancyOptimizer.step()` is a collective: every rank updates its shard of
the parameters and then broadcasts it to the others. The process that skipped goes on to the
next batch's DDP backward while the other waits in the step's broadcasts.
"""
import torch
import torch.distributed as dist
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP

ROWS, BATCH = 48, 4


def dataset():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(ROWS, 6, generator=g)
    y = x.sum(dim=1, keepdim=True)
    y[13] = float("inf")  # a corrupted label in the raw data
    return x, y


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    model = DDP(net)
    optimizer = ZeroRedundancyOptimizer(
        model.parameters(), optimizer_class=torch.optim.SGD, lr=0.01
    )
    x, y = dataset()
    x, y = x[rank::world], y[rank::world]
    skipped = 0
    for start in range(0, len(x), BATCH):
        optimizer.zero_grad()
        out = model(x[start:start + BATCH])
        loss = torch.nn.functional.mse_loss(out, y[start:start + BATCH])
        loss.backward()
        bad = torch.tensor(0.0 if torch.isfinite(loss) else 1.0)
        dist.all_reduce(bad, op=dist.ReduceOp.MAX)
        if bad.item():
            skipped += 1
            continue
        optimizer.step()
    print(f"process {rank}: skipped {skipped} step(s)", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
