# verify: ok
"""Look-alike: each process still reads its own clock after loading its (unevenly sized)
weight shard, but the waiting times are all-reduced with MAX before the deadline test, so both
processes drop the same requests and run the same row-parallel all-reduces.
"""
import time

import torch
import torch.distributed as dist

HIDDEN, CAPACITY, STEPS_PER_REQUEST, DEADLINE_S = 16, 2, 3, 0.5
SPLIT = [12, 4]  # input columns of the row-parallel weight per process


def load_shard(weight, cols):
    time.sleep(0.06 * len(cols))  # reading the shard from disk
    return weight[cols].clone()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    arrivals = {rid: time.perf_counter() for rid in range(6)}
    torch.manual_seed(0)
    weight = torch.randn(HIDDEN, HIDDEN) / HIDDEN
    start = sum(SPLIT[:rank])
    shard = load_shard(weight, list(range(start, start + SPLIT[rank])))
    waiting, running, steps = list(arrivals), {}, 0
    while waiting or running:
        now = time.perf_counter()
        waited = torch.tensor([now - arrivals[rid] for rid in range(len(arrivals))])
        dist.all_reduce(waited, op=dist.ReduceOp.MAX)
        expired = [rid for rid in waiting if waited[rid] > DEADLINE_S]
        waiting = [rid for rid in waiting if rid not in expired]
        while waiting and len(running) < CAPACITY:
            running[waiting.pop(0)] = 0
        if not running:
            break
        x = torch.stack([torch.full((HIDDEN,), float(rid)) for rid in running])
        partial = x[:, start:start + SPLIT[rank]] @ shard
        dist.all_reduce(partial)
        steps += 1
        for rid in list(running):
            running[rid] += 1
            if running[rid] == STEPS_PER_REQUEST:
                del running[rid]
    print(f"process {rank}: {steps} decode steps")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
