# verify: ok
"""Uneven shards under the Join context manager with the model alone, and a plain optimizer.

Looks like join_uneven_shards_zero_optimizer_left_out: 5 batches on process 0, 3 on process 1,
and only the DDP model among the joinables. But the optimizer is plain SGD, which runs no
collective, so DDP's join hook (which shadows the gradient all-reduces) covers every
collective the longer process runs.
"""
import torch
import torch.distributed as dist
from torch.distributed.algorithms.join import Join
from torch.nn.parallel import DistributedDataParallel as DDP

SHARD_ROWS = {0: 20, 1: 12}
BATCH = 4


def shard_batches(rank):
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(SHARD_ROWS[rank], 6, generator=g)
    y = x[:, :1] - x[:, 1:2]
    return [(x[i : i + BATCH], y[i : i + BATCH]) for i in range(0, len(x), BATCH)]


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)

    steps = 0
    with Join([model]):
        for x, y in shard_batches(rank):
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
    print(f"rank {rank}: {steps} steps")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
