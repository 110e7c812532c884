# verify: ok
"""Hand fix: the processes agree (all-reduce MAX) on whether a step was slow, so all profile together.

Modelled on https://github.com/pytorch/torchtitan/issues/266 ("profiler issue when training with 64
or more GPUs"): at the profiler steps the job timed out in an all-reduce, even with a barrier added
right after the trace dump, because not every rank had reached that point. Here the profiler's
`on_trace_ready` hook gathers each process's profiled CPU time into one table
(`all_gather_object`), but whether a profile runs at all depends on each process's own clock: the
forward of a packed batch of 40000 rows, which only process 1's half of the batches holds, is far
slower than that process's median, so process 1 alone starts a profile, and its report gathers
while process 0 is in the next step's gradient all-reduce.
"""
import statistics
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ProfilerActivity, profile


class SlowStepProfiler:
    def __init__(self, factor=10.0, steps=2):
        self.factor = factor
        self.steps = steps
        self.times = []
        self.prof = None
        self.left = 0

    def observe(self, seconds):
        if self.prof is not None:
            self.prof.step()
            self.left -= 1
            if self.left == 0:
                self.prof.stop()  # runs on_trace_ready
                self.prof = None
            return
        slow = len(self.times) >= 3 and seconds > self.factor * statistics.median(self.times)
        flag = torch.tensor([float(slow)])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if flag.item() > 0:
            self.prof = profile(activities=[ProfilerActivity.CPU], on_trace_ready=self.report)
            self.prof.start()
            self.left = self.steps
        self.times.append(seconds)

    def report(self, prof):
        cpu_us = sum(e.self_cpu_time_total for e in prof.key_averages())
        rows = [None] * dist.get_world_size()
        dist.all_gather_object(rows, (dist.get_rank(), round(cpu_us)))
        print("profiled CPU time (us) per process:", rows)


def batches(rank, world_size):
    gen = torch.Generator().manual_seed(40)
    sizes = [512] * 16
    sizes[12] = 40000  # one packed batch in the stream
    per = len(sizes) // world_size
    for n in sizes[rank * per:(rank + 1) * per]:
        x = torch.randn(n, 256, generator=gen)
        yield x, x[:, :1]


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    profiler = SlowStepProfiler()

    for x, y in batches(dist.get_rank(), dist.get_world_size()):
        start = time.perf_counter()
        loss = torch.nn.functional.mse_loss(model(x), y)
        forward_seconds = time.perf_counter() - start
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        profiler.observe(forward_seconds)

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
