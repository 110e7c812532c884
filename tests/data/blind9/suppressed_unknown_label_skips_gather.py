# verify: hang
"""A batch with an unknown label leaves ``contextlib.suppress(KeyError)`` before its all-gather.

Modelled on mosaicml/composer#334 (https://github.com/mosaicml/composer/pull/334: "If one process
hits a distributed barrier but another one crashes before reaching it, then the process that hit
the barrier will hang indefinitely") and NVIDIA-NeMo/Speech#578
(https://github.com/NVIDIA-NeMo/Speech/pull/578: a per-rank failure path that desynchronises the
ranks). A curation pass counts the labels of each batch of its own share and sums the counts over
the ranks with ``gather_label_counts()`` (an all-gather, in ``mod_labelsync.py``). The lookup
``LABEL_IDS[name]`` and the gather sit under one ``with contextlib.suppress(KeyError):`` so that
"a batch with a label we do not know is skipped"; rank 1's second batch holds the misspelt
"nuetral", so rank 1 gathers twice and rank 0 three times.
"""
import contextlib

import torch
import torch.distributed as dist

from mod_labelsync import gather_label_counts

LABEL_IDS = {"negative": 0, "neutral": 1, "positive": 2}
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
    totals = torch.zeros(len(LABEL_IDS), dtype=torch.long)
    for start in range(0, len(mine), BATCH):
        batch = mine[start:start + BATCH]
        with contextlib.suppress(KeyError):
            ids = torch.tensor([LABEL_IDS[name] for name in batch])
            counts = torch.bincount(ids, minlength=len(LABEL_IDS))
            totals += gather_label_counts(counts)  # expect: BCL005
    seen = torch.tensor([float(len(mine))])
    dist.all_reduce(seen)
    if rank == 0:
        print(f"label totals {totals.tolist()} over {int(seen.item())} rows")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
