# verify: hang,error
"""Stop training once the validation loss reaches a target, with each process's own loss.

Modelled on https://github.com/AMD-AGI/Primus/pull/854: the validation loss stayed a per-rank local
value, so near the target one rank's loss dipped below it and that rank left `train()` alone while
the others kept training and waited in the next gradient all-reduce.

`evaluate()` returns the mean loss over this process's validation shard (unsharded validation
rows taken `rows[rank::world]`); `TargetLossStopper.reached()` compares it with the target.  The
even validation rows are clean, the odd ones carry label noise, so process 0's loss reaches the
target epochs before process 1's: process 0 breaks out of the epoch loop and reaches the final
barrier while process 1 starts another epoch of DDP backward passes.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


class TargetLossStopper:
    def __init__(self, target):
        self.target = target
        self.history = []

    def reached(self, val_loss):
        self.history.append(val_loss)
        return val_loss <= self.target


@torch.no_grad()
def evaluate(model, x, y):
    return F.mse_loss(model(x), y).item()


def make_rows(n, noise, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]])
    y[1::2] += noise * torch.randn(y[1::2].shape, generator=g)
    return x, y


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x_train, y_train = make_rows(64, 0.0, 1)
    x_val, y_val = make_rows(32, 2.0, 2)
    x_train, y_train = x_train[rank::world], y_train[rank::world]
    x_val, y_val = x_val[rank::world], y_val[rank::world]
    stopper = TargetLossStopper(target=0.5)
    for epoch in range(40):
        for start in range(0, len(x_train), 8):
            loss = F.mse_loss(model(x_train[start:start + 8]), y_train[start:start + 8])
            opt.zero_grad()
            loss.backward()  # expect: BCL011
            opt.step()
        if stopper.reached(evaluate(model.module, x_val, y_val)):
            print(f"rank {rank}: target reached after epoch {epoch}")
            break
    dist.barrier()
    print(f"rank {rank}: validation losses {[round(v, 3) for v in stopper.history]}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
