# verify: ok check=LRS
"""Hand fix of reduce_val_loss_read_off_dst_plateau: an all-reduce, so every rank reads the sum.

`average_across_ranks` uses `dist.all_reduce`: every rank's scheduler sees the same global
validation loss and halves the learning rate at the same epochs.
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

EPOCHS = 5
LRS = []
W_TRUE = torch.tensor([[1.0], [-2.0], [0.5]])


def shard(rank: int, rows: int, noisy: bool, seed: int):
    g = torch.Generator().manual_seed(seed + rank)
    x = torch.randn(rows, 3, generator=g)
    y = torch.randn(rows, 1, generator=g) * 0.1 if noisy else x @ W_TRUE
    return x, y


def average_across_ranks(loss_sum: torch.Tensor, count: torch.Tensor) -> float:
    pair = torch.stack([loss_sum, count])
    dist.all_reduce(pair)
    return (pair[0] / pair[1]).item()


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(3, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, threshold=0.05, factor=0.5)
    train_x, train_y = shard(rank, 32, noisy=False, seed=10)
    val_x, val_y = shard(rank, 16, noisy=rank == 1, seed=20)
    for _ in range(EPOCHS):
        for i in range(0, 32, 8):
            loss = torch.nn.functional.mse_loss(model(train_x[i : i + 8]), train_y[i : i + 8])
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            err = torch.nn.functional.mse_loss(model(val_x), val_y, reduction="sum")
        val_loss = average_across_ranks(err, torch.tensor(float(len(val_x))))
        sched.step(val_loss)
        LRS.append(round(opt.param_groups[0]["lr"], 6))
    print(f"rank {rank} LRS {LRS}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
