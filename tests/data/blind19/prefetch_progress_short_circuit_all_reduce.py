# verify: hang
"""Host-cache prefetch check that skips the termination all-reduce on ranks without the request.

Modelled on sgl-project/sglang#38273 (https://github.com/sgl-project/sglang/pull/38273):
`check_prefetch_progress` returns True at once when the request is not in this rank's
`ongoing_prefetch` map, and only otherwise calls `can_terminate_prefetch`, which all-reduces the
termination flags over the tensor-parallel group. Whether a rank has the request depends on
whether its host-pool allocation succeeded, and that differs per rank: here each rank's KV page
size follows the number of KV heads it holds (3 heads over 2 ranks: 2 and 1), so the same
host-memory budget holds fewer pages on rank 0, whose allocation for the third request fails.
Rank 0 then skips the all-reduce that rank 1 enters.
"""
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

NUM_KV_HEADS = 3
HEAD_DIM = 64
TOKENS_PER_PAGE = 16
HOST_POOL_BYTES = 150_000

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

    def can_terminate_prefetch(self, rid: str) -> bool:
        op = self.ongoing_prefetch[rid]
        flags = torch.tensor([0.0 if op.finished else 1.0, float(op.terminated), 0.0])
        dist.all_reduce(flags, op=dist.ReduceOp.MAX)  # expect: BCL005
        return flags[0].item() == 0.0

    def check_prefetch_progress(self, rid: str) -> bool:
        return rid not in self.ongoing_prefetch or self.can_terminate_prefetch(rid)

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
            if cache.check_prefetch_progress(rid):
                admitted.append(rid)
            else:
                still_waiting.append(rid)
        waiting = still_waiting
        print(f"rank {rank} tick {tick}: free={cache.free_pages} admitted={admitted}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
