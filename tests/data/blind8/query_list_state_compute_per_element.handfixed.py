# verify: ok
"""Hand-fixed twin of query_list_state_compute_per_element.py.

The reciprocal rank is computed in `update()` and kept in a `"cat"` list state: torchmetrics
concatenates such a list before syncing, so `compute()` runs the same single gather on every
process whatever number of queries each one judged (an empty list is synced as an empty tensor).
"""
import torch
import torch.distributed as dist
from torchmetrics import Metric

QUERIES = [
    ([0.9, 0.2, 0.4], [0, 0, 1]),
    ([0.1, 0.8, 0.3, 0.5], [0, 1, 0, 0]),
    ([0.7, 0.6], [1, 1]),
    ([0.3, 0.9, 0.1], [0, 0, 0]),
    ([0.5, 0.4, 0.8, 0.2, 0.1], [0, 0, 0, 1, 0]),
    ([0.2, 0.6, 0.9], [1, 0, 0]),
]


class ReciprocalRank(Metric):
    full_state_update = False

    def __init__(self):
        super().__init__(sync_on_compute=True)
        self.add_state("reciprocal", default=[], dist_reduce_fx="cat")

    def update(self, scores, relevant):
        ranked = relevant[scores.argsort(descending=True)]
        first = int(ranked.nonzero()[0]) + 1
        self.reciprocal.append(torch.tensor([1.0 / first]))

    def compute(self):
        values = self.reciprocal
        if isinstance(values, list):
            values = torch.cat(values) if values else torch.zeros(0)
        return values.mean()


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    metric = ReciprocalRank()
    judged = torch.zeros(1)
    for scores, relevant in QUERIES[rank::world]:
        relevant = torch.tensor(relevant)
        if not relevant.any():
            continue
        metric.update(torch.tensor(scores), relevant)
        judged += 1
    mrr = metric.compute()
    dist.all_reduce(judged)
    if rank == 0:
        print(f"MRR {mrr.item():.3f} over {int(judged.item())} judged queries")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
