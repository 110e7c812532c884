# verify: ok
"""Look-alike: a metric whose `cat` list state stays empty on one process, computed on every
process.

Resembles https://github.com/Lightning-AI/torchmetrics/issues/2463 (an empty list state bypassed
the gather and deadlocked the sync). Only rows with a relevant answer add their score to the
`scores` list state; process 1's share has none, so its list is still empty at `compute()`.
torchmetrics 1.9's `_sync_dist` now puts an empty tensor in place of an empty `cat` list, so
process 1 joins the gathers like process 0.
"""
import torch
import torch.distributed as dist
from torchmetrics import Metric


class MeanRelevantScore(Metric):
    full_state_update = False

    def __init__(self):
        super().__init__()
        self.add_state("scores", default=[], dist_reduce_fx="cat")

    def update(self, scores, relevant):
        if relevant.any():
            self.scores.append(scores[relevant])

    def compute(self):
        scores = self.scores if isinstance(self.scores, torch.Tensor) else torch.cat(self.scores)
        return scores.mean() if scores.numel() else torch.tensor(float("nan"))


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    scores = torch.linspace(0.1, 0.9, 12)
    relevant = torch.tensor([i % 4 == 0 for i in range(12)])  # rows 0, 4 and 8: all dealt to process 0
    metric = MeanRelevantScore()
    for start in range(rank * 2, 12, world * 2):
        metric.update(scores[start : start + 2], relevant[start : start + 2])
    value = metric.compute()
    print(f"process {rank}: mean relevant score {value.item():.3f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
