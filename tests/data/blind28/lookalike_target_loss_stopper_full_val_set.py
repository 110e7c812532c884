# verify: ok
"""Look-alike: a target-loss stopper fed by a local evaluation of the whole validation set.

As in `target_loss_stopper_local_eval_mean`, `evaluate()` returns this process's own mean loss
with no collective, and `TargetLossStopper.reached()` breaks the epoch loop.  Here every process
evaluates all 32 validation rows (not a `rank::world` shard) with the weights DDP keeps identical,
so the losses, and the epoch at which each process stops, are the same everywhere.
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
    stopper = TargetLossStopper(target=2.5)
    for epoch in range(40):
        for start in range(0, len(x_train), 8):
            loss = F.mse_loss(model(x_train[start:start + 8]), y_train[start:start + 8])
            opt.zero_grad()
            loss.backward()
            opt.step()
        if stopper.reached(evaluate(model.module, x_val, y_val)):
            print(f"rank {rank}: target reached after epoch {epoch}")
            break
    dist.barrier()
    print(f"rank {rank}: validation losses {[round(v, 3) for v in stopper.history]}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
