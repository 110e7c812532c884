# verify: divergent check=RETURN_SCALE
"""Return scaler synchronised by broadcasting the tensors of a state_dict() that are copies.

Modelled on leggedrobotics/rsl_rl#233 (https://github.com/leggedrobotics/rsl_rl/pull/233), which
replaced `broadcast_object_list` of the state dicts with a per-tensor `torch.distributed.broadcast`
and dropped the `load_state_dict` calls "on purpose": "`state_dict()` returns `param.detach()`,
which shares storage with the model, so broadcasting those tensors writes the parameters in place.
If that ever stops holding, the loop silently no-ops on the non-source ranks."

Here it does not hold. A value-function trainer keeps a running mean and variance of the returns
it regresses on (`ReturnScaler`, float64 numpy arrays, Welford updates). After a warm-up pass over
its own rollouts each process fits its scaler, and `sync_from_rank0` is meant to give every process
rank 0's statistics: it broadcasts every tensor of `scaler.state_dict()`. But that method builds
its tensors with `torch.tensor(array)`, which copies: process 1 receives rank 0's statistics into
temporaries nobody reads and keeps its own.

Where the ranks part ways: each process's rollouts come from its own environment seed, and
process 1's returns are larger (mean about 30 against 10). Every broadcast agrees (the
temporaries hold rank 0's values), so only the scaler itself differs: the processes normalise
their targets differently for the whole run, and `RETURN_SCALE` (the scaler's mean and standard
deviation at the end) differs between them.
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
    for value in scaler.state_dict().values():
        dist.broadcast(value, src=src)  # expect: BCL010


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
