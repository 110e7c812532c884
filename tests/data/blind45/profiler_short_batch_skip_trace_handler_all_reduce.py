# verify: error,hang
"""Profiler whose `on_trace_ready` handler all-reduces, stepped only on full batches.

Shape of pytorch/pytorch#127077 (https://github.com/pytorch/pytorch/issues/127077): a
`torch.profiler.schedule(wait, warmup, active)` advanced with `prof.step()` on some processes'
iterations only, so each process's profiling cycle ends (and `on_trace_ready` runs) at a
different iteration. Here the handler all-reduces the recorded CPU time to print a job-wide
figure, and `prof.step()` is skipped for short batches (the tail of a length bucket), whose
timing is "not representative". Each process's own bucketing gives its short batches at
different iterations, so the handler's all-reduce meets the other process's gradient
all-reduce.
"""
import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, schedule

BATCH = 8


def report(prof):
    total = sum(e.self_cpu_time_total for e in prof.key_averages())
    t = torch.tensor([float(total), 1.0, float(prof.step_num)])
    dist.all_reduce(t)  # expect: BCL005
    print(f"profiled CPU time, all processes: {t[0].item() / 1e3:.1f} ms over {int(t[1])} processes", flush=True)


def main():
    dist.init_process_group("gloo")
    g = torch.Generator().manual_seed(42 + dist.get_rank())
    sizes = [BATCH if torch.rand(1, generator=g).item() > 0.35 else 5 for _ in range(10)]
    model = torch.nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    sched = schedule(wait=1, warmup=1, active=2, repeat=0)
    with profile(activities=[ProfilerActivity.CPU], schedule=sched, on_trace_ready=report) as prof:
        for n in sizes:
            x = torch.randn(n, 16, generator=g)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= dist.get_world_size()
            opt.step()
            if n < BATCH:
                continue  # a bucket's tail batch: not representative for timing
            prof.step()
    print("batch sizes", sizes, flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
