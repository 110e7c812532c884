# verify: ok
"""A training-step helper that skips a batch too small for BatchNorm.

Hand fix: `train_step()` skips a batch only when the smallest batch of the step (an all-reduce, MIN)
is too small, so every process skips the same step.


Modelled on https://github.com/pytorch/xla/pull/855: skipping "bad-size" batches inside the epoch
made one replica miss the cross-replica reduction that the others entered, and training hung.

`train_step()` returns early when a batch holds fewer than 2 rows (BatchNorm1d in training mode
raises "Expected more than 1 value per channel" on one row).  The 11 training rows are split into
contiguous shards with `tensor_split` (6 rows and 5 rows), in batches of 4: process 0's tail
batch has 2 rows, process 1's has 1, so process 1 skips its last step and goes to the barrier
after the epoch while process 0 runs the DDP forward (a buffer broadcast) and backward of its tail.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

BATCH = 4


def train_step(model, opt, x, y):
    rows = torch.tensor([x.shape[0]])
    dist.all_reduce(rows, op=dist.ReduceOp.MIN)
    if rows.item() < 2:
        return None
    out = model(x)
    loss = F.mse_loss(out, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    model = DDP(net)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(11, 3, generator=g)
    y = x.sum(dim=1, keepdim=True)
    shard = torch.arange(len(x)).tensor_split(world)[rank]
    losses = []
    for start in range(0, len(shard), BATCH):
        idx = shard[start:start + BATCH]
        losses.append(train_step(model, opt, x[idx], y[idx]))
    dist.barrier()
    print(f"rank {rank}: losses {losses}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
