# verify: divergent check=SCORE
"""A torchmetrics `Metric` whose batch counter is a plain attribute: synced sums over a local count.

Modelled on https://github.com/Deci-AI/super-gradients/pull/446: a custom torchmetrics metric
works under DDP only for the attributes registered with `add_state`, which are the ones reduced
across processes before `compute`; any other attribute keeps this process's own value.

`MeanBatchRecall` registers the per-batch recall sum as a state but counts batches in a plain
Python attribute. Each process scores the recordings it holds (process 0 has three batches,
process 1 two); `compute()` gathers and sums `recall_sum` over both processes and divides it by
the local `num_batches`, 3 on one process and 2 on the other, so the processes report different
scores (`SCORE`).
"""
import torch
import torch.distributed as dist
from torchmetrics import Metric


class MeanBatchRecall(Metric):
    full_state_update = False

    def __init__(self):
        super().__init__()
        self.add_state("recall_sum", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.num_batches = 0

    def update(self, preds, target):
        positives = (target == 1).sum().clamp(min=1)
        self.recall_sum += ((preds == 1) & (target == 1)).sum() / positives
        self.num_batches += 1  # expect: BCL011

    def compute(self):
        return self.recall_sum / self.num_batches


RECORDINGS = {  # recording -> rows; each process scores the recordings of its own files
    "ward-a": 6, "ward-b": 4,
}


def rows(name, n):
    g = torch.Generator().manual_seed(len(name) * 31 + n)
    target = torch.randint(0, 2, (n,), generator=g)
    flip = torch.rand(n, generator=g) < 0.3
    return torch.where(flip, 1 - target, target), target


def main():
    dist.init_process_group("gloo")
    name = sorted(RECORDINGS)[dist.get_rank()]
    preds, target = rows(name, RECORDINGS[name])
    metric = MeanBatchRecall()
    for p, t in zip(preds.split(2), target.split(2)):
        metric.update(p, t)
    global SCORE
    SCORE = round(metric.compute().item(), 4)
    print(f"[process {dist.get_rank()}] mean batch recall {SCORE}")
    dist.barrier()
    dist.destroy_process_group()


SCORE = None

if __name__ == "__main__":
    main()
