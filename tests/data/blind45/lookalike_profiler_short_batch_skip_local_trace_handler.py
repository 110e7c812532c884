# verify: ok
"""Look-alike: a profiler stepped only on full batches, whose handler stays local.

As in profiler_short_batch_skip_trace_handler_all_reduce, `prof.step()` is skipped for a
bucket's short tail batches, so each process's cycle ends at its own iteration; but the
`on_trace_ready` handler only prints this process's table, with no collective. The gradient
all-reduces run on every iteration on every process.
"""
import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, schedule

BATCH = 8


def report(prof):
    rows = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=3)
    print(f"process {dist.get_rank()} profile:\n{rows}", flush=True)


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
                continue
            prof.step()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
