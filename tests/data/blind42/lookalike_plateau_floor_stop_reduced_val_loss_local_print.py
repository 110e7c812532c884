# verify: ok
"""Look-alike: a plateau scheduler and an LR-floor stop, where each process evaluates its own
validation shard and prints its own loss, but the scheduler is stepped with the loss reduced over
the processes (`all_reduce` of `[sum, count]`), so the learning rate, and the epoch in which the
floor is reached, is the same everywhere. The per-process number only feeds a print.
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

EPOCHS = 30
MIN_LR = 0.01
LABEL_NOISE = [0.0, 1.5]


def load_shard(shard, seed):
    g = torch.Generator().manual_seed(seed + shard)
    x = torch.randn(96, 8, generator=g)
    y = x @ torch.linspace(-1, 1, 8) + LABEL_NOISE[shard % 2] * torch.randn(96, generator=g)
    return list(zip(x.split(16), y.split(16)))


@torch.no_grad()
def evaluate(model, batches):
    losses = [torch.nn.functional.mse_loss(model(x).squeeze(1), y, reduction="sum") for x, y in batches]
    return torch.stack(losses).sum().item(), sum(len(y) for _, y in batches)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1, threshold=0.05)
    train, val = load_shard(rank, 2000), load_shard(rank, 3000)
    for epoch in range(EPOCHS):
        for x, y in train:
            loss = torch.nn.functional.mse_loss(model(x).squeeze(1), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        local_sum, local_n = evaluate(model.module, val)
        print(f"process {rank} epoch {epoch}: own val loss {local_sum / local_n:.3f}")
        stats = torch.tensor([local_sum, float(local_n)])
        dist.all_reduce(stats)
        sched.step((stats[0] / stats[1]).item())
        if opt.param_groups[0]["lr"] < MIN_LR:
            break
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
