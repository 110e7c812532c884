# verify: ok
"""Look-alike: the same per-rank host pools and the same `or`, but the all-reduce is its first operand.

A rank whose host-pool allocation failed (rank 0, for the third request) still reaches the
all-reduce, because `group_all_finished(rid)` is the first operand; the second operand, a
deadline on the scheduler tick, is the same on every rank, so whether it is evaluated and what
it answers agree everywhere. Modelled on the same scheduler as
sgl-project/sglang#38273.
"""
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

NUM_KV_HEADS = 3
HEAD_DIM = 64
TOKENS_PER_PAGE = 16
HOST_POOL_BYTES = 150_000
PREFETCH_DEADLINE_TICKS = 2

# (request id, pages to prefetch) arriving at each scheduler tick; the same on every rank.
ARRIVALS = [[("r0", 3), ("r1", 2)], [("r2", 5)], [("r3", 1)]]


@dataclass
class PrefetchOp:
    rid: str
    pages_total: int
    pages_done: int = 0
    terminated: bool = False

    @property
    def finished(self) -> bool:
        return self.pages_done >= self.pages_total


class HostCache:
    def __init__(self, rank: int, world: int):
        heads = NUM_KV_HEADS // world + (1 if rank < NUM_KV_HEADS % world else 0)
        page_bytes = heads * HEAD_DIM * TOKENS_PER_PAGE * 2 * 4  # K and V, float32
        self.free_pages = HOST_POOL_BYTES // page_bytes
        self.ongoing_prefetch: dict[str, PrefetchOp] = {}

    def try_prefetch(self, rid: str, pages: int) -> bool:
        if pages > self.free_pages:
            return False
        self.free_pages -= pages
        self.ongoing_prefetch[rid] = PrefetchOp(rid, pages)
        return True

    def progress(self, pages_per_tick: int = 2) -> None:
        for op in self.ongoing_prefetch.values():
            op.pages_done = min(op.pages_total, op.pages_done + pages_per_tick)

    def group_all_finished(self, rid: str) -> bool:
        op = self.ongoing_prefetch.get(rid)
        flags = torch.tensor([0.0 if op is None or op.finished else 1.0, 0.0, 0.0])
        dist.all_reduce(flags, op=dist.ReduceOp.MAX)
        return flags[0].item() == 0.0

    def check_prefetch_progress(self, rid: str, tick: int) -> bool:
        # The collective comes first in the `or`, so every rank evaluates it; the second operand
        # (the scheduler tick, the same on every rank) is skipped alike everywhere.
        return self.group_all_finished(rid) or tick >= PREFETCH_DEADLINE_TICKS

    def release(self, rid: str) -> None:
        op = self.ongoing_prefetch.pop(rid, None)
        if op is not None:
            self.free_pages += op.pages_total


def main() -> None:
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    cache = HostCache(rank, world)
    waiting: list[str] = []
    admitted: list[str] = []
    for tick, arrivals in enumerate(ARRIVALS):
        box = [arrivals] if rank == 0 else [None]
        dist.broadcast_object_list(box, src=0)
        for rid, pages in box[0]:
            cache.try_prefetch(rid, pages)
            waiting.append(rid)
        cache.progress()
        still_waiting = []
        for rid in waiting:
            if cache.check_prefetch_progress(rid, tick):
                admitted.append(rid)
            else:
                still_waiting.append(rid)
        waiting = still_waiting
        print(f"rank {rank} tick {tick}: free={cache.free_pages} admitted={admitted}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
