# verify: hang
"""A `@contextmanager` timer whose all_reduce after `yield` is skipped where the body raised.

Modelled on https://github.com/chainer/chainer/pull/8508 (chainermn's reporter scope: "If the
`yield` omits an exception, the `__exit__()` is not called" for the code after it; fixed with
try/finally) and https://github.com/mne-tools/mne-python/pull/5775.

`timed("decode")` measures the decode of each raw record and all-reduces the slowest rank's time
after the body. Rank 1's shard has a corrupt record: `decode()` raises, the generator is resumed
with the exception at `yield`, and the all_reduce below it never runs there. The trainer catches
the error outside the `with`, reuses the previous batch and goes on to the gradient all-reduces,
which meet rank 0's timer all_reduce: from there on the two ranks' all_reduces are one call apart.
"""
import contextlib
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

RECORDS = {
    0: ["1,2,3,4|1", "2,0,1,3|0", "4,4,1,0|1", "3,1,0,2|0"],
    1: ["0,1,1,2|1", "3,2,2,1|0", "1,x,0,3|1", "2,2,4,1|0"],
}


@contextlib.contextmanager
def timed(name, timings):
    start = time.perf_counter()
    yield
    elapsed = torch.tensor([time.perf_counter() - start])
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)  # expect: BCL005
    timings[name] = elapsed.item()


def decode(record):
    features, label = record.split("|")
    x = torch.tensor([[float(v) for v in features.split(",")]])
    return x, torch.tensor([[float(label)]])


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    timings, batch, skipped = {}, None, 0
    for step, record in enumerate(RECORDS[rank]):
        try:
            with timed("decode", timings):
                batch = decode(record)
        except ValueError:
            skipped += 1  # corrupt record: train on the previous batch again
        x, y = batch
        loss = F.mse_loss(model(x), y)
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()
        opt.step()
        opt.zero_grad()
        if rank == 0:
            print(f"step {step}: loss {loss.item():.3f}, decode {timings.get('decode', 0) * 1e3:.2f} ms")
    print(f"rank {rank}: skipped {skipped} corrupt records")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
