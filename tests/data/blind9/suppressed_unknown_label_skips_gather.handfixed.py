# verify: ok
"""Hand-fixed twin of suppressed_unknown_label_skips_gather: unknown labels are counted, not skipped.

The lookup maps a label it does not know to an extra "unknown" bucket (``LABEL_IDS.get(name,
UNKNOWN)``), so no exception can leave the block and every batch of every rank reaches
``gather_label_counts()``; the unknown count is reported instead of silently dropped.
"""
import torch
import torch.distributed as dist

from mod_labelsync import gather_label_counts

LABEL_IDS = {"negative": 0, "neutral": 1, "positive": 2}
UNKNOWN = len(LABEL_IDS)
ROWS = [
    "positive", "negative", "neutral", "positive",
    "negative", "neutral", "positive", "positive",
    "neutral", "nuetral", "positive", "neutral",
]
BATCH = 2


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    per_rank = len(ROWS) // world
    mine = ROWS[rank * per_rank:(rank + 1) * per_rank]
    totals = torch.zeros(len(LABEL_IDS) + 1, dtype=torch.long)
    for start in range(0, len(mine), BATCH):
        batch = mine[start:start + BATCH]
        ids = torch.tensor([LABEL_IDS.get(name, UNKNOWN) for name in batch])
        counts = torch.bincount(ids, minlength=len(LABEL_IDS) + 1)
        totals += gather_label_counts(counts)
    seen = torch.tensor([float(len(mine))])
    dist.all_reduce(seen)
    if rank == 0:
        print(f"label totals {totals[:UNKNOWN].tolist()}, unknown {int(totals[UNKNOWN])} over {int(seen.item())} rows")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
