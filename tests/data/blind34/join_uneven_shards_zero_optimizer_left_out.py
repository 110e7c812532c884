# verify: hang,error
"""Uneven shards under the Join context manager, with the ZeRO optimizer left out of it.

Modelled on https://github.com/huggingface/datasets/issues/6437 (`split_dataset_by_node` on an
iterable dataset gives the nodes different numbers of examples; the user solved the hang with
`torch.distributed.algorithms.join.Join`, and the maintainer asks whether anything beyond "the
Join context manager used with the model and optimizer" was needed). Each process streams its
own shard files, 5 batches on process 0 and 3 on process 1. `Join([model])` lets the process
that runs out shadow DDP's gradient all-reduces, but the `ZeroRedundancyOptimizer` broadcasts
each parameter shard from its owner after every step, and it is not among the joinables: the
joined process shadows nothing for it. What parts the processes: the number of rows in each
process's shard files.
"""
import torch
import torch.distributed as dist
from torch.distributed.algorithms.join import Join
from torch.distributed.optim import ZeroRedundancyOptimizer
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
    opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.SGD, lr=0.05)

    steps = 0
    with Join([model]):
        for x, y in shard_batches(rank):
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()  # expect: BCL011
            steps += 1
    print(f"rank {rank}: {steps} steps")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
