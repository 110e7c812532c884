# verify: error
"""Evaluation loss that stays a Python float on the rank whose validation shard has no batch.

Modelled on https://github.com/meta-llama/llama-cookbook/issues/297 ("All_reduce fails when data
is not available on every process"): the evaluation loop starts from `eval_loss = 0.0`, adds each
batch's loss tensor to it and then all-reduces it. The validation batches are made by a
length-bucketing batch sampler that forms whole batches first (drop_last) and deals them out
round-robin, so a small validation set leaves one rank without any batch: its `eval_loss` is
still the float 0.0 when it reaches the collective.
"""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

VAL_LENGTHS = [5, 3, 7]   # 3 validation samples
BATCH = 2


class LengthBucketBatchSampler:
    """Sort by length, cut into full batches, give batch i to rank i % world."""

    def __init__(self, lengths, batch_size, rank, world):
        order = sorted(range(len(lengths)), key=lambda i: lengths[i])
        full = [order[i:i + batch_size] for i in range(0, len(order) - batch_size + 1, batch_size)]
        self.batches = full[rank::world]

    def __iter__(self):
        return iter(self.batches)

    def __len__(self):
        return len(self.batches)


def make_sample(i):
    g = torch.Generator().manual_seed(i)
    return torch.randn(4, generator=g), torch.randn(1, generator=g)


def evaluation(model, loader):
    model.eval()
    eval_loss = 0.0
    with torch.no_grad():
        for x, y in loader:
            eval_loss += nn.functional.mse_loss(model(x), y).detach().float()
    dist.all_reduce(eval_loss, op=dist.ReduceOp.SUM)  # expect: BCL008
    eval_epoch_loss = eval_loss / dist.get_world_size()
    return float(eval_epoch_loss)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    train = [make_sample(100 + i) for i in range(16)]
    for i in range(rank * 4, rank * 4 + 4):
        x, y = train[i * 2 % 16]
        loss = nn.functional.mse_loss(model(x[None]), y[None])
        opt.zero_grad()
        loss.backward()
        opt.step()

    val = [make_sample(i) for i in range(len(VAL_LENGTHS))]
    loader = DataLoader(val, batch_sampler=LengthBucketBatchSampler(VAL_LENGTHS, BATCH, rank, world))
    val_loss = evaluation(model, loader)
    if rank == 0:
        print(f"val loss {val_loss:.4f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
