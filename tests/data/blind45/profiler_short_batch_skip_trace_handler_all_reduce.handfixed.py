# verify: ok
"""Hand fix of profiler_short_batch_skip_trace_handler_all_reduce.

Every process calls `prof.step()` on every iteration, so the profiling cycle, and the handler's
all-reduce, ends at the same iteration everywhere; short batches are left out of a local
throughput figure instead. Modelled on pytorch/pytorch#127077
(https://github.com/pytorch/pytorch/issues/127077).
"""
import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, schedule

BATCH = 8


def report(prof):
    total = sum(e.self_cpu_time_total for e in prof.key_averages())
    t = torch.tensor([float(total), 1.0, float(prof.step_num)])
    dist.all_reduce(t)
    print(f"profiled CPU time, all processes: {t[0].item() / 1e3:.1f} ms over {int(t[1])} processes", flush=True)


def main():
    dist.init_process_group("gloo")
    g = torch.Generator().manual_seed(42 + dist.get_rank())
    sizes = [BATCH if torch.rand(1, generator=g).item() > 0.35 else 5 for _ in range(10)]
    model = torch.nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    sched = schedule(wait=1, warmup=1, active=2, repeat=0)
    full = 0
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
            full += n == BATCH  # only full batches count towards the local throughput
            prof.step()
    print("batch sizes", sizes, "full", full, flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
