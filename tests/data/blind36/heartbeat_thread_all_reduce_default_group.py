# verify: error,hang,divergent
"""A liveness heartbeat: a background thread all-reduces a counter on the default group every 50 ms.

Modelled on https://github.com/pytorch/pytorch/issues/175145 ("Persistent Deadlock when overlapping
NCCL P2P and Collectives from separate Python Threads"): collectives issued from a second Python
thread while the main thread trains. There each thread had its own process group and NCCL still
deadlocked; here the watchdog thread shares the default group with the training loop, so the order in
which each process issues "heartbeat" and "gradient" operations follows its own thread scheduling
and clock. Process 1 decodes its batches more slowly (its half of the stream holds long records), so
its heartbeats fall between different training collectives than process 0's, and operations of
different sizes meet in one gloo slot.
"""
import threading
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Heartbeat(threading.Thread):
    def __init__(self, period=0.05):
        super().__init__(daemon=True)
        self.period = period
        self.stop_event = threading.Event()
        self.beats = 0

    def run(self):
        while not self.stop_event.wait(self.period):
            alive = torch.ones(1)
            dist.all_reduce(alive)  # expect: BCL005
            if alive.item() < dist.get_world_size():
                print("a process missed its heartbeat")
            self.beats += 1


def batches(rank, world_size):
    lengths = [8] * 10 + [4000] * 10  # long records in the second half of the stream
    per = len(lengths) // world_size
    gen = torch.Generator().manual_seed(60)
    for n in lengths[rank * per:(rank + 1) * per]:
        raw = torch.randn(n, 64, generator=gen)
        yield (raw @ raw.T @ raw)[:8]  # "decoding"


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(64, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    heartbeat = Heartbeat()
    heartbeat.start()

    for x in batches(dist.get_rank(), dist.get_world_size()):
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        time.sleep(0.01)

    heartbeat.stop_event.set()
    heartbeat.join()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
