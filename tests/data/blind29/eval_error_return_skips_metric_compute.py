# verify: hang,error
"""An evaluation helper logs a per-process error and returns early, skipping the metric's compute.

Modelled on https://github.com/EvolvingLMMs-Lab/lmms-eval/pull/1304 (a rank whose `evaluate()`
raises logs the error and returns normally; the other ranks block in the next collective). Here
the evaluation F1 is a torchmetrics `BinaryF1Score` (it validates targets and syncs its states in
`compute()`). One clip of process 1's shard carries a stray label 2, so its `update()` raises;
`evaluate` catches that, reports it and returns None without computing, while process 0 reaches
`compute()` and waits for process 1 in the metric's sync (torchmetrics' `gather_all_tensors` opens
with a barrier).
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torchmetrics.classification import BinaryF1Score


def shard(rank, world, n, seed, stray=None):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    y = (x[:, 0] > 0).long()
    if stray is not None:
        y[stray] = 2  # a mislabelled clip
    return x[rank::world], y[rank::world]


def evaluate(model, x, y, metric):
    metric.reset()
    try:
        with torch.no_grad():
            for xb, yb in zip(x.split(4), y.split(4)):
                metric.update(model(xb).squeeze(-1).sigmoid(), yb)
    except RuntimeError as err:
        print(f"rank {dist.get_rank()}: evaluation skipped: {str(err)[:60]}")
        return None
    return metric.compute().item()  # expect: BCL011


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(5, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = shard(rank, world, 32, seed=1)
    vx, vy = shard(rank, world, 16, seed=2, stray=7)
    f1 = BinaryF1Score()
    for epoch in range(2):
        for xb, yb in zip(x.split(4), y.split(4)):
            loss = F.binary_cross_entropy_with_logits(model(xb).squeeze(-1), yb.float())
            opt.zero_grad()
            loss.backward()
            opt.step()
        score = evaluate(model.module, vx, vy, f1)
        print(f"rank {rank} epoch {epoch}: f1 {score}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
