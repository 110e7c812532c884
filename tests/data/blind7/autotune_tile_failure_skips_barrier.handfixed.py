# verify: ok
"""Hand fix of autotune_tile_failure_skips_barrier: only the local timing is inside `try`.

Each candidate is timed between two barriers that every rank reaches whether its timing
failed or not; a failure scores `inf`, which the MAX all-reduce spreads to every rank.

Original docstring: collective autotuning sweep whose per-candidate failure is swallowed inside
the barriers.

Modelled on flashinfer-ai/flashinfer#4688 (https://github.com/flashinfer-ai/flashinfer/pull/4688):
"The `try` body contains two `_barrier()` calls. If a candidate fails on one rank only, that rank
skips the remaining in-try barriers and reaches the trailing barrier at line 159 with a different
barrier count than the other ranks", and #4601
(https://github.com/flashinfer-ai/flashinfer/pull/4601), the same sweep in another backend.

`autotune()` times each tile size between two barriers and scores a failing candidate `inf`
("score-and-continue by design"). The tile must divide the rank's own row count; the token
budget split gives rank 0 96 rows and rank 1 80, so tiles 32 and 48 fail on rank 1 only, which
skips the second barrier of those candidates: from then on the ranks' barriers are apart, and
rank 1's final all-reduce meets one of rank 0's barriers.
"""
import math
import time
import warnings

import torch
import torch.distributed as dist

DIM = 16
ROWS = [96, 80]  # rows of each rank's shard of the token budget
TILES = [16, 32, 48]


def bench(x, tile):
    if x.shape[0] % tile:
        raise ValueError(f"{x.shape[0]} rows are not a multiple of tile {tile}")
    t0 = time.perf_counter()
    for _ in range(3):
        x.view(-1, tile, DIM).sum(1)
    return time.perf_counter() - t0


def autotune(x):
    scores = []
    for tile in TILES:
        dist.barrier()
        try:
            elapsed = bench(x, tile)
        except ValueError as exc:
            warnings.warn(f"candidate {tile} failed: {exc}")
            elapsed = math.inf
        dist.barrier()
        scores.append(elapsed)
    worst = torch.tensor(scores)
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    return TILES[int(worst.argmin())]


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    x = torch.randn(ROWS[rank], DIM)
    tile = autotune(x)
    print(f"rank {rank}: tile {tile}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
