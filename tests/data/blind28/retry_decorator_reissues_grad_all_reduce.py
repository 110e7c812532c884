# verify: hang,error
"""A retry decorator around a training step that averages gradients by hand.

Modelled on https://github.com/sql-machine-learning/elasticdl/pull/2446: a training step that
all-reduces gradients is wrapped in a retry loop that catches the error and runs the step again.

`@retry(LossSpike, attempts=2)` wraps `train_one_batch`, which runs forward and backward,
all-reduces every gradient, and only then checks this process's own loss against a ceiling.
Process 1's second record batch holds a corrupt label (1000 instead of a sum of three normals), so
its loss is far above the ceiling: it raises after the all-reduce, the decorator calls the step again (a second round of all-reduces for the same
batch), fails again and gives up on the batch.  Process 0 ran one round for that batch; from then
on the rounds pair with the wrong batches, and process 1 is still all-reducing when process 0
reaches the final barrier.
"""
import functools

import torch
import torch.distributed as dist
import torch.nn.functional as F


MAX_LOSS = 1e4


class LossSpike(RuntimeError):
    pass


def retry(exc_type, attempts=2):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for attempt in range(1, attempts + 1):
                try:
                    return fn(*args, **kwargs)
                except exc_type as err:
                    print(f"{fn.__name__} failed (attempt {attempt}/{attempts}): {err}")
            return None
        return wrapper
    return decorate


@retry(LossSpike, attempts=2)
def train_one_batch(model, opt, x, y):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)  # expect: BCL005
        p.grad /= dist.get_world_size()
    value = loss.item()
    if value > MAX_LOSS:
        raise LossSpike(f"loss {value:.1f} above {MAX_LOSS}")
    opt.step()
    return value


def record_batches(rank):
    g = torch.Generator().manual_seed(7 + rank)
    batches = []
    for i in range(4):
        x = torch.randn(4, 3, generator=g)
        y = x.sum(dim=1, keepdim=True)
        if rank == 1 and i == 1:
            y[2, 0] = 1000.0  # a corrupt record in this process's shard
        batches.append((x, y))
    return batches


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.001)
    losses = [train_one_batch(model, opt, x, y) for x, y in record_batches(rank)]
    dist.barrier()
    print(f"rank {rank}: losses {losses}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
