# verify: hang,error
"""Megatron-style timer registry whose `log()` all-reduces every timer this process created.

Shape of deepspeedai/DeepSpeed#3579 (https://github.com/deepspeedai/DeepSpeed/pull/3579):
a summary that loops over the records this process holds and calls `dist.all_reduce` once
per record (there, per message size; here, per timer) to report the maximum over the
processes. Timers are created lazily on first use, and the "decode-retry" timer exists only
on a process whose shard held a record that failed to decode, so the processes enter a
different number of all-reduces and the extra one meets the next gradient all-reduce.
"""
import time

import torch
import torch.distributed as dist

SHARDS = [b"ok ok ok ok ok ok ok ok", b"ok ok \xff ok ok ok ok ok"]


class Timers:
    def __init__(self):
        self.elapsed = {}

    def time(self, name, fn, *args):
        start = time.perf_counter()
        out = fn(*args)
        self.elapsed[name] = self.elapsed.get(name, 0.0) + time.perf_counter() - start
        return out

    def log(self):
        for name, seconds in sorted(self.elapsed.items()):
            t = torch.tensor([seconds])
            dist.all_reduce(t, op=dist.ReduceOp.MAX)  # expect: BCL005
            print(f"{name}: max {t.item() * 1e3:.2f} ms", flush=True)
        self.elapsed.clear()


def decode(record):
    try:
        return record.decode("utf-8")
    except UnicodeDecodeError:
        return timers.time("decode-retry", lambda r: r.decode("latin-1"), record)


timers = Timers()


def main():
    dist.init_process_group("gloo")
    records = SHARDS[dist.get_rank() % len(SHARDS)].split()
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step, record in enumerate(records):
        text = timers.time("decode", decode, record)
        x = torch.full((2, 4), float(len(text)))
        loss = timers.time("forward", lambda: model(x).pow(2).mean())
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
        if step % 4 == 3:
            timers.log()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
