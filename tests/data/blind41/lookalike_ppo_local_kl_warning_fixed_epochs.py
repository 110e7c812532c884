# verify: ok
"""PPO update epochs that report each process's own approximate KL without acting on it.

Look-alike of an early stop on a local KL: each process still computes the approximate KL of its
own minibatch after every epoch (the second environment's larger observations make it exceed the
target), but it only prints a warning; the number of update epochs is fixed, so both processes
run the same number of DDP backwards.
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

TARGET_KL = 0.01
UPDATE_EPOCHS = 4


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    g = torch.Generator().manual_seed(1000 + rank)
    obs = torch.randn(64, 4, generator=g) * (1.0 + 6.0 * rank)
    actions = torch.randint(0, 2, (64,), generator=g)
    advantages = torch.randn(64, generator=g)
    torch.manual_seed(0)
    policy = DDP(torch.nn.Linear(4, 2))
    opt = torch.optim.Adam(policy.parameters(), lr=0.05)
    with torch.no_grad():
        old_logp = torch.log_softmax(policy(obs), -1).gather(1, actions[:, None]).squeeze(1)
    for epoch in range(UPDATE_EPOCHS):
        logp = torch.log_softmax(policy(obs), -1).gather(1, actions[:, None]).squeeze(1)
        ratio = (logp - old_logp).exp()
        approx_kl = ((ratio - 1) - (logp - old_logp)).mean().item()
        if approx_kl > 1.5 * TARGET_KL:
            print(f"rank {rank}: epoch {epoch} kl {approx_kl:.4f} above target")
        loss = -torch.min(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
