# verify: hang,error
"""Off-policy updates gated on the size of each process's own replay buffer.

Modelled on https://github.com/Motphys/UniLab/pull/304 (a learner-start gate for the single- and
multi-GPU off-policy runners: no update until `replay_buffer.size >= learning_starts`; with one
buffer per learner rank, the gate opens at a different iteration on each rank).

Each process plays whole episodes of its own environment per iteration and stores their
transitions; episodes end when the pole falls, and the second environment's episodes are longer.
The buffer reaches `LEARNING_STARTS` one iteration earlier there, so that process runs one more
`fabric.backward` (DDP's gradient all-reduce) than the other.
"""
import random

import torch
from lightning.fabric import Fabric

LEARNING_STARTS = 60
ITERATIONS = 5
EPISODES_PER_ITER = 2


class PoleEnv:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.max_len = 9 if seed % 2 == 0 else 13  # the second environment balances longer

    def episode(self):
        length = self.rng.randint(self.max_len - 2, self.max_len)
        obs = torch.randn(length, 4)
        return [(obs[t], t % 2, 1.0) for t in range(length)]


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    q_net, opt = fabric.setup(model, torch.optim.SGD(model.parameters(), lr=0.1))
    env = PoleEnv(seed=2000 + fabric.global_rank)
    buffer = []
    updates = 0
    for it in range(ITERATIONS):
        for _ in range(EPISODES_PER_ITER):
            buffer.extend(env.episode())
        if len(buffer) < LEARNING_STARTS:
            continue
        batch = random.Random(it).sample(buffer, 16)
        obs = torch.stack([b[0] for b in batch])
        act = torch.tensor([b[1] for b in batch])
        rew = torch.tensor([b[2] for b in batch])
        q = q_net(obs).gather(1, act[:, None]).squeeze(1)
        loss = torch.nn.functional.mse_loss(q, rew)
        opt.zero_grad()
        fabric.backward(loss)  # expect: BCL011
        opt.step()
        updates += 1
    print(f"rank {fabric.global_rank}: buffer {len(buffer)}, {updates} updates")
    fabric.barrier()


if __name__ == "__main__":
    main()
