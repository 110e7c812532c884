# verify: ok
"""Hand fix of random_search_unseeded_sampler_hidden_ddp: every process draws, then every process
takes process 0's parameters (`broadcast_object_list`), as the fix of
https://github.com/huggingface/transformers/issues/18609 passes rank 0's trial to the others.
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
        trial = Trial(self.rng)
        trial.suggest_int("hidden", 8, 256)
        shared = [trial.params]
        dist.broadcast_object_list(shared, src=0)
        trial.params = shared[0]
        return trial


def objective(params):
    hidden = params["hidden"]
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1))
    model = DDP(net)
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
        print("trial", trial.params, objective(trial.params))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
