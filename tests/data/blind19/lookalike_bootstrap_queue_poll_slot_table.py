# verify: ok
"""Look-alike: the same per-rank bootstrap queues, polled into a fixed table of request slots.

Modelled on the same prefill bootstrap queue as sgl-project/sglang#37909: rank 1 still holds the
aborted request when rank 0 has dropped it, but the poll states go into a table of MAX_SLOTS
entries indexed by the slot the router gave each request, so both ranks all-reduce the same
shape at every tick (a slot a rank does not hold contributes 255, the MIN identity).
"""
from dataclasses import dataclass, field

import torch
import torch.distributed as dist

# Router events: (tick sent, kind, request id). Every rank receives all of them: new requests
# through the scheduler's own broadcast, aborts through each rank's control socket.
ROUTER_EVENTS = [(0, "add", "req-a"), (0, "add", "req-b"), (0, "add", "req-c"), (1, "abort", "req-b")]
LINK_DELAY_TICKS = [0, 1]  # per-rank latency of the control socket
TICKS = 3
MAX_SLOTS = 8
SLOT_OF = {"req-a": 0, "req-b": 1, "req-c": 2}  # slot assigned by the router with the request


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
        table = poll_slots_and_all_reduce(self.queue, tick)
        ready = [s.rid for s in self.queue if table[SLOT_OF[s.rid]] >= 1]
        self.queue = [s for s in self.queue if table[SLOT_OF[s.rid]] < 1]
        return ready


def poll_slots_and_all_reduce(senders: list, tick: int) -> list:
    # One fixed-size table on every rank: a request a rank does not hold leaves its slot at the
    # MIN identity, so the layout and length agree whatever each queue holds.
    table = torch.full((MAX_SLOTS,), 255, dtype=torch.uint8)
    for s in senders:
        table[SLOT_OF[s.rid]] = s.poll(tick)
    dist.all_reduce(table, op=dist.ReduceOp.MIN)
    return table.tolist()


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
