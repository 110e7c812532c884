# verify: error,hang
"""A memory report that takes the job-wide peak RSS whenever this process's own peak has grown.

Modelled on https://github.com/NVIDIA-NeMo/Megatron-Bridge/pull/3645 ("aggregate TB memory metrics
across PP group"): each rank's memory high-water mark is its own, so the reported peak is reduced
across ranks with MAX before the writer emits it, and every rank has to take part in that reduce.
Here the reduce runs only when this process's own peak RSS (`ru_maxrss`) has grown by more than
16 MiB since its last report. Process 1's half of the stream holds the large decoded items, which
its cache keeps, so its peak grows at every step and it enters the reduce; process 0's peak stays
flat and it goes on to the next step's gradient all-reduce.
"""
import resource

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

THRESHOLD_KIB = 16 * 1024


class PeakMemoryReporter:
    def __init__(self):
        self.last_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    def after_step(self, step):
        peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        if peak_kib - self.last_kib > THRESHOLD_KIB:
            job_peak = torch.tensor([float(peak_kib)])
            dist.all_reduce(job_peak, op=dist.ReduceOp.MAX)  # expect: BCL005
            print(f"step {step}: job peak RSS {job_peak.item() / 1024:.0f} MiB")
            self.last_kib = peak_kib


def items(rank, world_size):
    sides = [64] * 6 + [4096] * 6  # the second half of the stream holds full-size scans
    per = len(sides) // world_size
    gen = torch.Generator().manual_seed(50)
    for side in sides[rank * per:(rank + 1) * per]:
        yield torch.randn(side, 2048, generator=gen)


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(2048, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    reporter = PeakMemoryReporter()
    cache = []

    for step, item in enumerate(items(dist.get_rank(), dist.get_world_size())):
        cache.append(item)  # decoded items are kept for the next epoch
        x = item[:32]
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        reporter.after_step(step)

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
