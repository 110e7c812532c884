# verify: ok
"""Hand-fixed twin of timed_section_skipped_by_exception.py.

The timer's all_reduce is in a `finally` around `yield`, so it runs whether the body returned or
raised, on every rank, once per record.
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
    try:
        yield
    finally:
        elapsed = torch.tensor([time.perf_counter() - start])
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
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
