# verify: ok
"""Hand fix: process 0 decides which waiting requests are overdue and broadcasts the list,
so every process drops the same requests and builds the same batches.
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
        expired = [rid for rid in waiting if now - arrivals[rid] > DEADLINE_S]
        decision = [expired]
        dist.broadcast_object_list(decision, src=0)
        expired = decision[0]
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
