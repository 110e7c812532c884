# verify: hang,error
"""`max_steps` left unset in the config and filled from the length of this process's own shard.

Modelled on https://github.com/iKernels/transformers-lightning/issues/88: the total number of
steps was computed from the dataloader's length and came out differently than expected in the
distributed setting, so training could crash a few steps short. Here `resolve_schedule` fills
`max_steps` from the rows of the shard files this process reads (files are dealt round-robin,
and the last file is short), so one process plans 10 steps and the other 8; the longer one waits
in its backward for a partner that has finished.
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
config = resolve_schedule(dict(CONFIG), len(x))
torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=config["lr"])
model, opt = accelerator.prepare(model, opt)
batches = itertools.cycle(range(0, len(x), config["batch_size"]))
for step in range(config["max_steps"]):
    i = next(batches)
    loss = torch.nn.functional.mse_loss(model(x[i:i + config["batch_size"]]), y[i:i + config["batch_size"]])
    opt.zero_grad()
    accelerator.backward(loss)  # expect: BCL011
    opt.step()
accelerator.wait_for_everyone()
print("max_steps", config["max_steps"], "loss", loss.item())
