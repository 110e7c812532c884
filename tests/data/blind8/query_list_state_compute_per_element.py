# verify: hang
"""Mean reciprocal rank kept as a list state with `dist_reduce_fx=None`: compute() gathers per query.

Modelled on Lightning-AI/torchmetrics#3503 (fixes #3336): "For states declared with
`dist_reduce_fx=None`, `Metric._sync_dist()` gathers every list element separately, so ranks
that called `update()` a different number of times issue a different number of collective calls
and the job deadlocks on `compute()`."

    https://github.com/Lightning-AI/torchmetrics/pull/3503

`ReciprocalRank` keeps each query's relevance vector in ranked order (their lengths differ, so
the author chose `dist_reduce_fx=None` to keep one tensor per query rather than `"cat"`). Every
process calls `compute()` exactly once, but torchmetrics' sync gathers the list one element at
a time. Queries without any judged-relevant candidate are skipped, as trec_eval does; process
1's strided share holds one of them, so it gathers 2 elements against process 0's 3.
"""
import torch
import torch.distributed as dist
from torchmetrics import Metric

# (retrieval scores of the candidates, relevance judgements), one entry per query
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
        self.add_state("ranked", default=[], dist_reduce_fx=None)

    def update(self, scores, relevant):
        order = scores.argsort(descending=True)
        self.ranked.append(relevant[order].float())

    def compute(self):
        ranks = [int(r.nonzero()[0]) + 1 for r in self.ranked]
        return torch.tensor([1.0 / r for r in ranks]).mean()


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
    mrr = metric.compute()  # expect: BCL011
    dist.all_reduce(judged)
    if rank == 0:
        print(f"MRR {mrr.item():.3f} over {int(judged.item())} judged queries")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
