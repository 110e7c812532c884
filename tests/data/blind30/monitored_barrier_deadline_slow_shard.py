# verify: error
"""A monitored barrier with a short deadline after per-process evaluation of unequal cost.

Modelled on https://github.com/NVIDIA/nccl/issues/849 ("Ranks 4, 5, 6, 7 failed to pass
monitoredBarrier"): `monitored_barrier` raises on rank 0 when another process arrives after
its timeout, whether that process is stuck or only slow. Here each process scores its share of
the evaluation clips, and scoring a clip costs time in proportion to its length; the long clips
come at the end of the list, so the second process's contiguous share takes several times as
long as the first's, longer than the 2 s the barrier allows.
"""
import time
from datetime import timedelta

import torch
import torch.distributed as dist

CLIP_SECONDS = [0.1, 0.1, 0.2, 0.2, 1.0, 1.2, 1.5, 1.5]


def score(clip_len):
    time.sleep(clip_len)  # decoding, proportional to the clip's length
    return torch.tensor([clip_len * 0.5])


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    per = len(CLIP_SECONDS) // world
    share = CLIP_SECONDS[rank * per:(rank + 1) * per]
    total = sum((score(c) for c in share), torch.zeros(1))
    dist.monitored_barrier(timeout=timedelta(seconds=2), wait_all_ranks=True)  # expect: BCL005
    dist.all_reduce(total)
    print(f"process {rank}: summed score {total.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
