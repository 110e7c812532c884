# verify: ok
"""Look-alike: every process runs the same random search, but the sampler is seeded with the
study's seed from the configuration, so every process draws the same trials; only the data
(seeded per process) differs, and DDP averages its gradients.
"""
import os
import random

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

CONFIG = {"study_seed": 1234, "n_trials": 2}


class RandomSearch:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def ask(self):
        return {"hidden": self.rng.randint(8, 256), "lr": 10 ** self.rng.uniform(-3, -1)}


def objective(params):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, params["hidden"]), torch.nn.ReLU(), torch.nn.Linear(params["hidden"], 1))
    model = DDP(net)
    opt = torch.optim.SGD(model.parameters(), lr=params["lr"])
    gen = torch.Generator().manual_seed(int(os.environ["RANK"]))
    x, y = torch.randn(16, 4, generator=gen), torch.randn(16, 1, generator=gen)
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
    study = RandomSearch(CONFIG["study_seed"])
    for _ in range(CONFIG["n_trials"]):
        params = study.ask()
        print("trial", params, objective(params))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
