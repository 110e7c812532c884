# verify: ok
"""Hand fix: the approximate KL is averaged over the processes before the early-stop test.

Modelled on https://github.com/huggingface/trl/pull/254 (PPO early stopping hung in a multi-GPU
run: the `policykl > 1.5 * target_kl` test read the KL of this process's minibatch only, so one
process left the update loop while the other went on into the next backward, whose gradient
all-reduce the first never joins).

Each process rolls out its own environment (seed 1000 + rank); the second environment's
observations are larger, so the same policy change moves its action distribution further. DDP
averages the gradients, but the approximate KL that decides the early stop is local.
"""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

TARGET_KL = 0.01
UPDATE_EPOCHS = 8


def rollout(env_seed, steps=64):
    g = torch.Generator().manual_seed(env_seed)
    obs_scale = 1.0 + 6.0 * (env_seed % 2)  # the second environment's sensors read larger values
    obs = torch.randn(steps, 4, generator=g) * obs_scale
    actions = torch.randint(0, 2, (steps,), generator=g)
    rewards = torch.randn(steps, generator=g)
    return obs, actions, rewards


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    policy = DDP(torch.nn.Linear(4, 2))
    opt = torch.optim.Adam(policy.parameters(), lr=0.05)

    obs, actions, rewards = rollout(1000 + rank)
    advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-8)
    with torch.no_grad():
        old_logp = torch.log_softmax(policy(obs), -1).gather(1, actions[:, None]).squeeze(1)

    epochs_run = 0
    for epoch in range(UPDATE_EPOCHS):
        logp = torch.log_softmax(policy(obs), -1).gather(1, actions[:, None]).squeeze(1)
        ratio = (logp - old_logp).exp()
        kl = ((ratio - 1) - (logp - old_logp)).mean().detach()
        dist.all_reduce(kl)
        approx_kl = kl.item() / dist.get_world_size()
        if approx_kl > 1.5 * TARGET_KL:
            print(f"rank {rank}: early stop at epoch {epoch}, kl {approx_kl:.4f}")
            break
        clipped = torch.clamp(ratio, 0.8, 1.2)
        loss = -torch.min(ratio * advantages, clipped * advantages).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        epochs_run += 1

    print(f"rank {rank}: {epochs_run} update epochs")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
