# verify: error
"""An observation normalizer whose statistics are all-reduced until it has seen WARMUP rows.

Modelled on https://github.com/leggedrobotics/rsl_rl/pull/226 (synchronising the empirical
normalizer's statistics across ranks, weighting each rank by its own sample count since the local
batches are uneven).

`RunningNorm.observe` reduces the batch's sums and counts with `accelerator.reduce` and then sets
`self.frozen` from the rows this process has seen itself; `main()` reads the attribute before the
next call. Process 0's environments give four rows a step, process 1's two: process 0 freezes
after two steps and moves on to its backward while process 1 is still reducing statistics.
"""
import torch
import torch.nn as nn
from accelerate import Accelerator

WARMUP = 8
STEPS = 5


class RunningNorm:
    def __init__(self, accelerator, dim):
        self.accelerator = accelerator
        self.total = torch.zeros(dim)
        self.total_sq = torch.zeros(dim)
        self.count = torch.zeros(1)
        self.seen_here = 0
        self.frozen = False

    def observe(self, obs):
        stats = torch.cat([obs.sum(0), (obs * obs).sum(0), torch.tensor([float(len(obs))])])
        stats = self.accelerator.reduce(stats, reduction="sum")
        dim = obs.shape[1]
        self.total += stats[:dim]
        self.total_sq += stats[dim:2 * dim]
        self.count += stats[-1]
        self.seen_here += len(obs)
        self.frozen = self.seen_here >= WARMUP

    def __call__(self, obs):
        mean = self.total / self.count
        var = (self.total_sq / self.count - mean * mean).clamp(min=1e-4)
        return (obs - mean) / var.sqrt()


ENVS = [4, 2]  # environments simulated by each process


def rollout(process_index, step):
    rows = ENVS[process_index]
    g = torch.Generator().manual_seed(100 * process_index + step)
    return torch.randn(rows, 3, generator=g)


def main():
    accelerator = Accelerator()
    torch.manual_seed(0)
    policy = nn.Linear(3, 1)
    model, opt = accelerator.prepare(policy, torch.optim.SGD(policy.parameters(), lr=0.1))
    norm = RunningNorm(accelerator, 3)
    for step in range(STEPS):
        obs = rollout(accelerator.process_index, step)
        if not norm.frozen:
            norm.observe(obs)  # expect: BCL005
        loss = model(norm(obs)).pow(2).mean()
        opt.zero_grad()
        accelerator.backward(loss)
        opt.step()
    accelerator.wait_for_everyone()
    accelerator.print(f"normalizer count {int(norm.count.item())}")


if __name__ == "__main__":
    main()
