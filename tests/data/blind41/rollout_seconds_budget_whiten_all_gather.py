# verify: error,hang
"""Advantages whitened over all processes, gathered after a rollout bounded by the wall clock.

Modelled on https://github.com/huggingface/trl/issues/151 (PPO training stuck in multi-GPU runs:
the collective over `ppo/policy/advantages` hung because the advantages had a different length on
each process).

Each process steps its own environment until `ROLLOUT_SECONDS` have passed. The second
environment renders a frame at every step and is slower, so its rollout holds fewer steps. The
advantages are then gathered into buckets shaped like this process's own tensor to whiten them
with the global mean and standard deviation.
"""
import time

import torch
import torch.distributed as dist

ROLLOUT_SECONDS = 0.4


class GridEnv:
    def __init__(self, seed):
        self.g = torch.Generator().manual_seed(seed)
        self.render = seed % 2 == 1  # the second environment was configured with rendering on

    def step(self):
        time.sleep(0.02 if self.render else 0.004)
        return torch.rand(1, generator=self.g).item()


def collect(env):
    rewards = []
    start = time.monotonic()
    while time.monotonic() - start < ROLLOUT_SECONDS:
        rewards.append(env.step())
    return torch.tensor(rewards)


def discounted_advantages(rewards, gamma=0.9):
    out, running = torch.zeros_like(rewards), 0.0
    for t in reversed(range(len(rewards))):
        running = rewards[t] + gamma * running
        out[t] = running
    return out - out.mean()


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    env = GridEnv(seed=4000 + rank)
    adv = discounted_advantages(collect(env))
    buckets = [torch.zeros_like(adv) for _ in range(world)]
    dist.all_gather(buckets, adv)  # expect: BCL015
    everything = torch.cat(buckets)
    adv = (adv - everything.mean()) / (everything.std() + 1e-8)
    print(f"rank {rank}: {len(adv)} steps, global mean {everything.mean():.3f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
