# verify: ok check=RESULT
"""Look-alike: a MetricCollection built from a `set` of metric names, in an order each process hashes.

The names come from a set of strings, and string hashing is salted per process, so iterating
`WANTED` gives the processes different orders; collectives issued in that order would pair one
metric's states with another's. But `MetricCollection` adds the metrics of a dict in sorted key
order, so every process holds them, and computes (and gathers) them, in the same order; the
results (`RESULT`) agree.
"""
import torch
import torch.distributed as dist
from torchmetrics import MeanSquaredError, MetricCollection
from torchmetrics.classification import BinaryAccuracy, BinaryAUROC, BinaryRecall

FACTORY = {
    "accuracy": BinaryAccuracy,
    "auroc": BinaryAUROC,
    "brier": MeanSquaredError,
    "recall": BinaryRecall,
}
WANTED = {"recall", "brier", "auroc", "accuracy"}


def shard(rank):
    g = torch.Generator().manual_seed(11 + rank)
    target = torch.randint(0, 2, (10 + 4 * rank,), generator=g)
    probs = (target.float() * 0.6 + torch.rand(len(target), generator=g) * 0.5).clamp(0, 1)
    return probs, target


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    print(f"[process {rank}] names in set order: {list(WANTED)}")
    metrics = MetricCollection({name: FACTORY[name]() for name in WANTED})
    probs, target = shard(rank)
    for p, t in zip(probs.split(4), target.split(4)):
        metrics["brier"].update(p, t.float())
        for name in ("accuracy", "auroc", "recall"):
            metrics[name].update(p, t)
    global RESULT
    RESULT = tuple(sorted((k, round(v.item(), 4)) for k, v in metrics.compute().items()))
    print(f"[process {rank}] {RESULT}")
    dist.barrier()
    dist.destroy_process_group()


RESULT = None

if __name__ == "__main__":
    main()
