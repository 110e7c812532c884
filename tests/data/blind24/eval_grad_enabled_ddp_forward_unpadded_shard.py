# verify: hang,error
"""Validation through the DDP wrapper with autograd on, over unpadded per-process shards.

Modelled on SeungjunNah/DeepDeblur-PyTorch#44
(https://github.com/SeungjunNah/DeepDeblur-PyTorch/issues/44): with the repository's
`DistributedEvalSampler` (no padding, so the processes may hold different numbers of samples) the
program hung at the end, and the maintainer asked whether anything in the evaluation still
synchronised the processes. Here it is DDP itself: the validation loop calls the wrapper without
`torch.no_grad()`, and with autograd on every forward of a model with buffers (BatchNorm's running
statistics) begins by broadcasting them from rank 0. 5 validation rows dealt without padding give
3 batches to process 0 and 2 to process 1, so process 0's third forward waits for a broadcast
that process 1, already in the final `all_reduce` of the totals, never sends.
"""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Subset, TensorDataset

VAL_ROWS = 5


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

    g = torch.Generator().manual_seed(2)
    x = torch.randn(16 + VAL_ROWS, 4, generator=g)
    y = x[:, :1] * 2 - x[:, 1:2]
    train = Subset(TensorDataset(x[:16], y[:16]), range(rank, 16, world))
    val = Subset(TensorDataset(x[16:], y[16:]), range(rank, VAL_ROWS, world))

    model.train()
    for xb, yb in DataLoader(train, batch_size=4):
        loss = nn.functional.mse_loss(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    model.eval()
    totals = torch.zeros(2)
    for xb, yb in DataLoader(val, batch_size=1):
        pred = model(xb)  # expect: BCL011
        totals += torch.tensor([nn.functional.mse_loss(pred, yb, reduction="sum").item(), len(xb)])
    dist.all_reduce(totals)
    if rank == 0:
        print(f"validation mse {totals[0].item() / totals[1].item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
