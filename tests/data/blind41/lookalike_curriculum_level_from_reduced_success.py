# verify: ok check=LEVEL
"""A curriculum whose level rises on the success rate of every process's episodes together.

Look-alike of a curriculum advanced from each process's own episodes: here each process still
plays its own environment (the second one is easier and succeeds more often), and the number of
episodes each plays per iteration differs, but the successes and episode counts are summed over
the processes before the level test, so every process moves to the next level at the same
iteration and trains the same number of steps.
"""
import random

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

LEVEL = 0
PROMOTE_AT = 0.6


def play(env_seed, level, it):
    rng = random.Random(env_seed * 100 + it)
    skill = 0.75 if env_seed % 2 == 1 else 0.45  # the second environment is easier
    n_episodes = 3 + env_seed % 2
    return [rng.random() < skill - 0.1 * level for _ in range(n_episodes)]


def main():
    global LEVEL
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    policy = DDP(torch.nn.Linear(4, 2))
    opt = torch.optim.SGD(policy.parameters(), lr=0.05)
    for it in range(6):
        outcomes = play(8000 + rank, LEVEL, it)
        tally = torch.tensor([float(sum(outcomes)), float(len(outcomes))])
        dist.all_reduce(tally)
        if tally[0] / tally[1] >= PROMOTE_AT:
            LEVEL += 1
        obs = torch.randn(8, 4) * (1 + LEVEL)
        loss = policy(obs).logsumexp(-1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"rank {rank}: level {LEVEL}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
