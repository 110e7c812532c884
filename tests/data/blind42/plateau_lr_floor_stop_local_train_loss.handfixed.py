# verify: ok
"""Hand fix of plateau_lr_floor_stop_local_train_loss: the epoch loss is averaged over the
processes (all_reduce of [sum, count]) before the plateau scheduler sees it, so every process holds
the same learning rate and reaches the floor in the same epoch.

Modelled on https://github.com/lucidrains/DALLE-pytorch/issues/268 (the fix there: pass the
averaged loss to the scheduler).
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

EPOCHS = 30
MIN_LR = 0.01
LABEL_NOISE = [0.0, 1.5]  # the second shard was scraped with noisier labels


def load_shard(shard):
    g = torch.Generator().manual_seed(1000 + shard)
    x = torch.randn(128, 8, generator=g)
    w = torch.linspace(-1, 1, 8)
    y = x @ w + LABEL_NOISE[shard % 2] * torch.randn(128, generator=g)
    return list(zip(x.split(16), y.split(16)))


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1, threshold=0.05)
    batches = load_shard(dist.get_rank())
    for epoch in range(EPOCHS):
        total = 0.0
        for x, y in batches:
            loss = torch.nn.functional.mse_loss(model(x).squeeze(1), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        stats = torch.tensor([total, float(len(batches))])
        dist.all_reduce(stats)
        sched.step((stats[0] / stats[1]).item())
        lr = opt.param_groups[0]["lr"]
        if lr < MIN_LR:
            print(f"process {dist.get_rank()}: lr {lr:.4f} below floor after epoch {epoch}")
            break
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
