# verify: ok
"""Hand fix of timer_registry_log_all_reduce_per_local_timer.

`log()` walks a fixed list of timer names, the same on every process, and reports a timer this
process never started as 0 s, so every process enters the same all-reduces. Modelled on
deepspeedai/DeepSpeed#3579 (https://github.com/deepspeedai/DeepSpeed/pull/3579).
"""
import time

import torch
import torch.distributed as dist

SHARDS = [b"ok ok ok ok ok ok ok ok", b"ok ok \xff ok ok ok ok ok"]
TIMER_NAMES = ("decode", "decode-retry", "forward")


class Timers:
    def __init__(self):
        self.elapsed = {}

    def time(self, name, fn, *args):
        start = time.perf_counter()
        out = fn(*args)
        self.elapsed[name] = self.elapsed.get(name, 0.0) + time.perf_counter() - start
        return out

    def log(self):
        for name in TIMER_NAMES:
            t = torch.tensor([self.elapsed.get(name, 0.0)])
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
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
