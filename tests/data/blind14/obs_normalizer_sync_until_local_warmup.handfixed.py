# verify: ok
"""Hand-fixed: the warm-up ends on the all-reduced row count, so every process freezes together.

The broken program is `obs_normalizer_sync_until_local_warmup.py` (modelled on https://github.com/leggedrobotics/rsl_rl/pull/226).
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
        # The all-reduced count, the same on every process, ends the warm-up.
        self.frozen = self.count.item() >= WARMUP

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
            norm.observe(obs)
        loss = model(norm(obs)).pow(2).mean()
        opt.zero_grad()
        accelerator.backward(loss)
        opt.step()
    accelerator.wait_for_everyone()
    accelerator.print(f"normalizer count {int(norm.count.item())}")


if __name__ == "__main__":
    main()
