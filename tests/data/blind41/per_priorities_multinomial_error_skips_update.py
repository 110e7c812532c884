# verify: hang,error
"""A prioritized-replay draw that raises on one process, caught by skipping that update.

Modelled on https://github.com/ray-project/ray/pull/66030 (RLlib learners that have no usable
batch skip the update, and the skip deadlocks torch DDP: the other learners wait in the gradient
all-reduce of a step the skipping learner never takes).

Priorities are |TD error|; the critic starts at zero, so a buffer whose transitions all carry a
zero reward has zero priority everywhere, and `torch.multinomial` raises `RuntimeError` for it.
The second process's environment pays no reward in its first episodes (a sparse-reward maze):
its first draw raises, the `except` skips the update, and it runs one `accelerator.backward`
fewer than the other process.
"""
import os

import torch
from accelerate import Accelerator

UPDATES = 3


def episode_rewards(env_seed, episode):
    g = torch.Generator().manual_seed(env_seed * 100 + episode)
    rewards = (torch.rand(12, generator=g) > 0.5).float()
    if env_seed % 2 == 1 and episode == 0:
        rewards.zero_()  # sparse maze: the goal is not found in the first episode
    return rewards


def main():
    os.environ.setdefault("ACCELERATE_USE_CPU", "true")
    accelerator = Accelerator()
    torch.manual_seed(0)
    critic = torch.nn.Linear(4, 1)
    torch.nn.init.zeros_(critic.weight)
    torch.nn.init.zeros_(critic.bias)
    opt = torch.optim.SGD(critic.parameters(), lr=0.1)
    critic, opt = accelerator.prepare(critic, opt)

    env_seed = 3000 + accelerator.process_index
    obs, rewards = [], []
    updates = 0
    for episode in range(UPDATES):
        r = episode_rewards(env_seed, episode)
        obs.append(torch.randn(len(r), 4))
        rewards.append(r)
        all_obs, all_rew = torch.cat(obs), torch.cat(rewards)
        with torch.no_grad():
            td = (all_rew - critic(all_obs).squeeze(1)).abs()
        try:
            idx = torch.multinomial(td, 8, replacement=True)
        except RuntimeError as err:
            print(f"process {accelerator.process_index}: skipping update ({err})")
            continue
        loss = ((critic(all_obs[idx]).squeeze(1) - all_rew[idx]) ** 2).mean()
        opt.zero_grad()
        accelerator.backward(loss)  # expect: BCL011
        opt.step()
        updates += 1

    print(f"process {accelerator.process_index}: {updates} updates")
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
