# verify: ok
"""A rollout of a fixed number of steps, timed for a frames-per-second report, then gathered.

Look-alike of a rollout bounded by the wall clock: the clock is read here too, and the second
environment is slower (it renders), but the rollout is bounded by `ROLLOUT_STEPS`, so every
process gathers an advantage tensor of the same length into buckets shaped like its own; the
clock only feeds this process's printed frames per second.
"""
import time

import torch
import torch.distributed as dist

ROLLOUT_STEPS = 24


class GridEnv:
    def __init__(self, seed):
        self.g = torch.Generator().manual_seed(seed)
        self.render = seed % 2 == 1

    def step(self):
        time.sleep(0.01 if self.render else 0.002)
        return torch.rand(1, generator=self.g).item()


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    env = GridEnv(seed=4000 + rank)
    start = time.monotonic()
    rewards = torch.tensor([env.step() for _ in range(ROLLOUT_STEPS)])
    fps = ROLLOUT_STEPS / (time.monotonic() - start)
    adv = rewards - rewards.mean()
    buckets = [torch.zeros_like(adv) for _ in range(world)]
    dist.all_gather(buckets, adv)
    everything = torch.cat(buckets)
    adv = (adv - everything.mean()) / (everything.std() + 1e-8)
    print(f"rank {rank}: {fps:.0f} steps/s, global std {everything.std():.3f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
