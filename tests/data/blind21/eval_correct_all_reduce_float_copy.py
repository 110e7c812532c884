# verify: divergent check=VAL_ACC,BEST_EPOCH
"""Validation accuracy all-reduced through a cast copy, so every rank keeps its own count.

Modelled on https://github.com/pytorch/pytorch/issues/102435: `all_reduce(total_loss.cuda(),
op=AVG)` reduced a temporary that `.cuda()` had just made and left `total_loss` as it was; the
reporter's working version kept the converted tensor in a name and read it after the collective.
Here the counts are int64 and the conversion is `.float()` (a copy, as `.cuda()` is on a CPU
tensor); each rank then selects its "best" epoch from its own shard's accuracy.
"""
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

VAL_ACC = []
BEST_EPOCH = None


def evaluate(model, shard):
    correct = torch.zeros((), dtype=torch.long)
    seen = torch.zeros((), dtype=torch.long)
    with torch.no_grad():
        for x, y in shard:
            correct += (model(x).argmax(-1) == y).sum()
            seen += y.numel()
    dist.all_reduce(correct.float(), op=dist.ReduceOp.SUM)  # expect: BCL010
    dist.all_reduce(seen.float(), op=dist.ReduceOp.SUM)
    return (correct / seen).item()


def main():
    global BEST_EPOCH
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(7 + rank)
    w = torch.randn(5, 3, generator=torch.Generator().manual_seed(1))
    def batch(n):
        x = torch.randn(n, 5, generator=g)
        return x, (x @ w).argmax(-1)
    train = [batch(16) for _ in range(4)]
    val = [batch(10 + 3 * rank) for _ in range(2)]

    best = -1.0
    for epoch in range(3):
        for x, y in train:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        acc = evaluate(model, val)
        VAL_ACC.append(round(acc, 4))
        if acc > best:
            best, BEST_EPOCH = acc, epoch
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
