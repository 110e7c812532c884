# verify: ok check=RET_STD
"""Hand fix: the normaliser is updated with the moments of every process's returns.

Modelled on https://github.com/Denys88/rl_games/pull/363 (multi-GPU: without synchronising the
running normalisation statistics, every rank's observation and value normalisers drift on their
local shard, so ranks train subtly different models whose averaged gradients conflict).

The critic regresses returns divided by a running standard deviation (as in PPO's value
normalisation). DDP averages the critic's gradients, but the running moments live outside the
module and are updated from this process's returns: the second process's environment pays
larger rewards, so its scale, and the targets it trains on, differ from the first's.
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

RET_STD = None


class RunningMeanStd:
    def __init__(self):
        self.mean, self.var, self.count = 0.0, 1.0, 1e-4

    def update(self, x):
        moments = torch.tensor([x.sum(), (x * x).sum(), float(len(x))], dtype=torch.float64)
        dist.all_reduce(moments)
        b_count = moments[2].item()
        b_mean = moments[0].item() / b_count
        b_var = moments[1].item() / b_count - b_mean**2
        delta, total = b_mean - self.mean, self.count + b_count
        self.mean += delta * b_count / total
        m2 = self.var * self.count + b_var * b_count + delta**2 * self.count * b_count / total
        self.var, self.count = m2 / total, total


def episode_returns(env_seed, it):
    g = torch.Generator().manual_seed(env_seed * 10 + it)
    reward_scale = 1.0 if env_seed % 2 == 0 else 5.0  # the second environment's rewards are larger
    rewards = torch.rand(32, generator=g) * reward_scale
    return torch.flip(torch.cumsum(torch.flip(rewards, [0]), 0), [0])


def main():
    global RET_STD
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    critic = DDP(torch.nn.Linear(3, 1))
    opt = torch.optim.SGD(critic.parameters(), lr=0.01)
    ret_rms = RunningMeanStd()
    for it in range(4):
        returns = episode_returns(7000 + rank, it)
        ret_rms.update(returns)
        targets = returns / (ret_rms.var**0.5 + 1e-8)
        obs = torch.randn(len(returns), 3)
        loss = torch.nn.functional.mse_loss(critic(obs).squeeze(1), targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
    RET_STD = round(ret_rms.var**0.5, 4)
    print(f"rank {rank}: return std {RET_STD}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
