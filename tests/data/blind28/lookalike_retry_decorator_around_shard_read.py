# verify: ok
"""Look-alike: a retry decorator on one process's flaky read, outside the collectives.

`@retry(OSError, attempts=3)` wraps `read_batch()`, which on process 1 fails the first time it
opens each odd batch (a storage hiccup) and succeeds on the next attempt.  Only the local read is
repeated; the training step that all-reduces the gradients runs once per batch on every process,
so the rounds pair up however many attempts a read took.
"""
import functools

import torch
import torch.distributed as dist
import torch.nn.functional as F


def retry(exc_type, attempts=3):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for attempt in range(1, attempts + 1):
                try:
                    return fn(*args, **kwargs)
                except exc_type as err:
                    print(f"{fn.__name__} failed (attempt {attempt}/{attempts}): {err}")
            raise RuntimeError(f"{fn.__name__} failed {attempts} times")
        return wrapper
    return decorate


class FlakyShard:
    def __init__(self, rank):
        self.rank = rank
        self.opened = set()
        self.g = torch.Generator().manual_seed(7 + rank)

    @retry(OSError, attempts=3)
    def read_batch(self, i):
        if self.rank == 1 and i % 2 == 1 and i not in self.opened:
            self.opened.add(i)
            raise OSError(f"timed out reading batch {i}")
        x = torch.randn(4, 3, generator=self.g)
        return x, x.sum(dim=1, keepdim=True)


def train_one_batch(model, opt, x, y):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= dist.get_world_size()
    opt.step()
    return loss.item()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    shard = FlakyShard(rank)
    losses = [train_one_batch(model, opt, *shard.read_batch(i)) for i in range(4)]
    dist.barrier()
    print(f"rank {rank}: losses {losses}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
