# verify: ok
"""Hand fix: the request ids are aligned across the group before polling (sglang#37909).

Poll states of each rank's own bootstrap queue, reduced element by element over the group.

Modelled on sgl-project/sglang#37909 (https://github.com/sgl-project/sglang/pull/37909): the
prefill bootstrap queue polls every queued request's KV sender and all-reduces the poll states
(MIN) over the tensor/context-parallel group, one element per queued request. The queue is
filled from each rank's own inbox, and the router's abort for a request reaches the ranks at
different ticks (rank 1's link is one tick slower), so at the poll rank 0 has already dropped
the aborted request and rank 1 still holds it: the poll tensors are 2 and 3 long.
"""
from dataclasses import dataclass, field

import torch
import torch.distributed as dist

# Router events: (tick sent, kind, request id). Every rank receives all of them: new requests
# through the scheduler's own broadcast, aborts through each rank's control socket.
ROUTER_EVENTS = [(0, "add", "req-a"), (0, "add", "req-b"), (0, "add", "req-c"), (1, "abort", "req-b")]
LINK_DELAY_TICKS = [0, 1]  # per-rank latency of the control socket
TICKS = 3


@dataclass
class KVSender:
    rid: str
    created: int

    def poll(self, tick: int) -> int:
        # 0 bootstrapping, 1 waiting for input, 2 transferring
        return min(2, tick - self.created)


@dataclass
class BootstrapQueue:
    rank: int
    queue: list = field(default_factory=list)

    def receive(self, tick: int) -> None:
        delay = LINK_DELAY_TICKS[self.rank]
        arrived = [e for e in ROUTER_EVENTS if e[0] + (delay if e[1] == "abort" else 0) == tick]
        for _, kind, rid in arrived:
            if kind == "add":
                self.queue.append(KVSender(rid, tick))
            else:
                self.queue = [s for s in self.queue if s.rid != rid]

    def pop_bootstrapped(self, tick: int) -> list:
        # Poll only the requests every rank of the group still holds, in one agreed order.
        everyone = [None] * dist.get_world_size()
        dist.all_gather_object(everyone, [s.rid for s in self.queue])
        common = set.intersection(*(set(rids) for rids in everyone))
        aligned = [s for s in self.queue if s.rid in common]
        if not aligned:
            return []
        polls = poll_and_all_reduce(aligned, tick)
        done = {s.rid for s, p in zip(aligned, polls) if p >= 1}
        ready = [s.rid for s in aligned if s.rid in done]
        self.queue = [s for s in self.queue if s.rid not in done]
        return ready


def poll_and_all_reduce(senders: list, tick: int) -> list:
    polls = torch.tensor([s.poll(tick) for s in senders], dtype=torch.uint8)
    dist.all_reduce(polls, op=dist.ReduceOp.MIN)
    return polls.tolist()


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    bq = BootstrapQueue(rank)
    started = []
    for tick in range(TICKS):
        bq.receive(tick)
        started += bq.pop_bootstrapped(tick)
        print(f"rank {rank} tick {tick}: queue={[s.rid for s in bq.queue]} started={started}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
