# verify: ok
"""Hand fix of max_steps_default_from_local_shard_accelerate: the default is filled from the
smallest shard of all processes (`accelerator.gather` of each process's row count), so every
process plans the same number of steps.
"""
import itertools
import math

import torch
from accelerate import Accelerator

CONFIG = {"epochs": 2, "batch_size": 8, "max_steps": None, "lr": 0.05}
SHARD_ROWS = [16, 16, 16, 16, 8]


def load_shards(files):
    gen = torch.Generator().manual_seed(sum(files))
    n = sum(SHARD_ROWS[f] for f in files)
    return torch.randn(n, 4, generator=gen), torch.randn(n, 1, generator=gen)


def resolve_schedule(config, n_rows):
    if config["max_steps"] is None:
        config["max_steps"] = config["epochs"] * math.ceil(n_rows / config["batch_size"])
    return config


accelerator = Accelerator(cpu=True)
my_files = list(range(len(SHARD_ROWS)))[accelerator.process_index::accelerator.num_processes]
x, y = load_shards(my_files)
n_rows = accelerator.gather(torch.tensor([len(x)])).min().item()
config = resolve_schedule(dict(CONFIG), n_rows)
torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=config["lr"])
model, opt = accelerator.prepare(model, opt)
batches = itertools.cycle(range(0, len(x), config["batch_size"]))
for step in range(config["max_steps"]):
    i = next(batches)
    loss = torch.nn.functional.mse_loss(model(x[i:i + config["batch_size"]]), y[i:i + config["batch_size"]])
    opt.zero_grad()
    accelerator.backward(loss)
    opt.step()
accelerator.wait_for_everyone()
print("max_steps", config["max_steps"], "loss", loss.item())
