# verify: ok
"""Look-alike: skip the ZeroRedundancyOptimizer step on a non-finite gradient norm, under DDP.

Like `zero_step_skipped_on_local_nonfinite_loss`, one process's shard holds a corrupted target
(inf) and each process decides on its own whether to `continue` past `optimizer.step()`, a
collective. Here the test reads the gradient norm after `loss.backward()`: DDP's backward has
all-reduced the gradients, so every process holds the same averaged gradients (inf wherever one
process's were) and computes the same norm. Both processes skip the same step.
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
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
        if not torch.isfinite(grad_norm):
            skipped += 1
            continue
        optimizer.step()
    print(f"process {rank}: skipped {skipped} step(s)", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
