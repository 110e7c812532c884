# verify: ok check=RETURN_SCALE
"""Hand fix of return_scaler_state_dict_broadcast_copies: load the received state back.

Modelled on leggedrobotics/rsl_rl#233 (https://github.com/leggedrobotics/rsl_rl/pull/233), which
warns that the per-tensor broadcast only works while `state_dict()` shares storage with the
object. `ReturnScaler.state_dict()` copies, so `sync_from_rank0` keeps the dict it broadcast into
and hands it to `scaler.load_state_dict(state)`: every process then normalises with rank 0's
statistics, and `RETURN_SCALE` agrees at the end.
"""
import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

RETURN_SCALE = None  # (mean, std) of the return scaler at the end of the run
OBS_DIM = 3


class ReturnScaler:
    """Running mean and variance of the returns (parallel Welford update), in float64."""

    def __init__(self):
        self.mean = np.zeros(1)
        self.var = np.ones(1)
        self.count = 1e-4

    def update(self, returns):
        batch_mean, batch_var, n = returns.mean(0), returns.var(0), returns.shape[0]
        delta = batch_mean - self.mean
        total = self.count + n
        self.mean = self.mean + delta * n / total
        m2 = self.var * self.count + batch_var * n + delta**2 * self.count * n / total
        self.var = m2 / total
        self.count = total

    def normalize(self, returns):
        return (returns - torch.from_numpy(self.mean).float()) / torch.from_numpy(np.sqrt(self.var)).float()

    def state_dict(self):
        return {
            "mean": torch.tensor(self.mean),
            "var": torch.tensor(self.var),
            "count": torch.tensor(self.count),
        }

    def load_state_dict(self, state):
        self.mean = state["mean"].numpy().copy()
        self.var = state["var"].numpy().copy()
        self.count = float(state["count"])


def sync_from_rank0(scaler, src=0):
    """Give every process the source's statistics, tensor by tensor (no pickling)."""
    state = scaler.state_dict()
    for value in state.values():
        dist.broadcast(value, src=src)
    scaler.load_state_dict(state)  # the tensors are copies: read the received values back


def rollouts(rank, n=32):
    g = torch.Generator().manual_seed(100 + rank)
    obs = torch.randn(n, OBS_DIM, generator=g)
    base = 10.0 if rank == 0 else 30.0
    returns = base + obs @ torch.tensor([[2.0], [-1.0], [0.5]]) + torch.randn(n, 1, generator=g)
    return obs, returns


def train_critic(obs, returns, scaler, rank):
    critic = DDP(nn.Sequential(nn.Linear(OBS_DIM, 16), nn.Tanh(), nn.Linear(16, 1)))
    opt = torch.optim.Adam(critic.parameters(), lr=0.01)
    for epoch in range(3):
        for i in range(0, obs.shape[0], 8):
            x, y = obs[i:i + 8], returns[i:i + 8]
            loss = nn.functional.mse_loss(critic(x), scaler.normalize(y))
            opt.zero_grad()
            loss.backward()
            opt.step()
        summary = torch.tensor([loss.item()])
        dist.all_reduce(summary)
        if rank == 0:
            print(f"epoch {epoch}: mean value loss {summary.item() / dist.get_world_size():.4f}")


def main():
    global RETURN_SCALE
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    obs, returns = rollouts(rank)

    scaler = ReturnScaler()
    scaler.update(returns.double().numpy())  # warm-up pass over this process's rollouts
    sync_from_rank0(scaler)
    train_critic(obs, returns, scaler, rank)

    RETURN_SCALE = (round(float(scaler.mean[0]), 4), round(float(np.sqrt(scaler.var[0])), 4))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
