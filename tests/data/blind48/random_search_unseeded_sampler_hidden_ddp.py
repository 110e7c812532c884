# verify: error
"""Random-search trials drawn on every process of a torchrun job by an unseeded sampler.

Modelled on https://github.com/huggingface/transformers/issues/18609: under torchrun every process
ran Optuna's `optimize()` itself, so each drew its own trial, and DDP failed ("DDP expects same
model across all ranks"). Here a small `RandomSearch` helper (Optuna's ask/suggest interface) is
seeded from the OS on each process, so the suggested hidden width differs between processes and
the first trial's DDP wrapper fails.
"""
import random

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Trial:
    def __init__(self, rng):
        self.rng = rng
        self.params = {}

    def suggest_int(self, name, low, high):
        self.params[name] = self.rng.randint(low, high)
        return self.params[name]


class RandomSearch:
    def __init__(self, seed=None):
        self.rng = random.Random(seed)

    def ask(self):
        return Trial(self.rng)


def objective(trial):
    hidden = trial.suggest_int("hidden", 8, 256)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1))
    model = DDP(net)  # expect: BCL015
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    for _ in range(3):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    val = loss.detach().clone()
    dist.all_reduce(val)
    return val.item() / dist.get_world_size()


def main():
    dist.init_process_group("gloo")
    study = RandomSearch()
    for _ in range(2):
        trial = study.ask()
        print("trial", trial.params, objective(trial))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
