# verify: ok
"""Hand fix: every process keeps as many groups as the process that kept the fewest.

Modelled on https://github.com/horovod/horovod/issues/3980 (imbalanced data: one rank has more
batches than the other, and the extra step's gradient reduction waits for a rank that has
already finished).

GRPO-style dynamic sampling: each process samples 4 completions for each of its prompts and drops
the groups whose rewards are all equal (no advantage signal). `accelerator.accumulate` counts
micro-batches per process and syncs the gradients every second one; the two processes keep a
different number of groups, so the second process reaches one synchronising backward more than
the first.
"""
import os

import torch
from accelerate import Accelerator

PROMPTS_PER_PROCESS = 6
ITERATIONS = 2


def sample_groups(seed, iteration):
    g = torch.Generator().manual_seed(seed * 10 + iteration)
    groups = []
    for _ in range(PROMPTS_PER_PROCESS):
        feats = torch.randn(4, 8, generator=g)
        rewards = (torch.rand(4, generator=g) < 0.5).float()
        groups.append((feats, rewards))
    return groups


def main():
    os.environ.setdefault("ACCELERATE_USE_CPU", "true")
    accelerator = Accelerator(gradient_accumulation_steps=2)
    torch.manual_seed(0)
    policy = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(policy.parameters(), lr=0.01)
    policy, opt = accelerator.prepare(policy, opt)

    kept_total = 0
    for it in range(ITERATIONS):
        groups = sample_groups(5000 + accelerator.process_index, it)
        kept = [(f, r) for f, r in groups if r.std() > 0]
        fewest = torch.tensor(len(kept))
        torch.distributed.all_reduce(fewest, op=torch.distributed.ReduceOp.MIN)
        kept = kept[: int(fewest)]
        kept_total += len(kept)
        for feats, rewards in kept:
            adv = (rewards - rewards.mean()) / (rewards.std() + 1e-6)
            with accelerator.accumulate(policy):
                logp = torch.nn.functional.logsigmoid(policy(feats).squeeze(1))
                loss = -(adv * logp).mean()
                accelerator.backward(loss)
                opt.step()
                opt.zero_grad()

    print(f"process {accelerator.process_index}: kept {kept_total} groups")
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
