# verify: error,hang
"""Tensor-parallel decode scheduler that aborts overdue waiting requests by each process's own clock.

Modelled on sgl-project/sglang#27164 (https://github.com/sgl-project/sglang/pull/27164): with
TP > 1 and request timeouts, each rank decided which waiting requests had timed out from its own
`time.perf_counter()`, so the ranks' batches differed and the TP collective deadlocked. Here two
processes serve the same queue with a row-parallel layer (an all-reduce per decode step); each
loads its shard of the weight before serving, the larger shard more slowly, so only process 0
finds the waiting requests past their deadline and drops them.
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
        waiting = [rid for rid in waiting if rid not in expired]
        while waiting and len(running) < CAPACITY:
            running[waiting.pop(0)] = 0
        if not running:
            break
        x = torch.stack([torch.full((HIDDEN,), float(rid)) for rid in running])
        partial = x[:, start:start + SPLIT[rank]] @ shard
        dist.all_reduce(partial)  # expect: BCL015
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
