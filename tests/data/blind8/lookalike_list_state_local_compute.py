# verify: ok
"""Look-alike of query_list_state_compute_per_element.py: the same per-query list state, computed locally.

The metric keeps its `dist_reduce_fx=None` list of ranked relevance vectors and queries without
a relevant candidate are still skipped, so the lists still differ in length (3 against 2), but
the metric is built with `sync_on_compute=False`: `compute()` communicates nothing, and the
processes combine the local sums and counts with one all-reduce that each of them makes once.
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
        super().__init__(sync_on_compute=False)
        self.add_state("ranked", default=[], dist_reduce_fx=None)

    def update(self, scores, relevant):
        order = scores.argsort(descending=True)
        self.ranked.append(relevant[order].float())

    def compute(self):
        ranks = [int(r.nonzero()[0]) + 1 for r in self.ranked]
        return torch.tensor([sum(1.0 / r for r in ranks), float(len(ranks))])


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    metric = ReciprocalRank()
    for scores, relevant in QUERIES[rank::world]:
        relevant = torch.tensor(relevant)
        if not relevant.any():
            continue
        metric.update(torch.tensor(scores), relevant)
    totals = metric.compute()
    dist.all_reduce(totals)
    if rank == 0:
        print(f"MRR {(totals[0] / totals[1]).item():.3f} over {int(totals[1].item())} judged queries")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
