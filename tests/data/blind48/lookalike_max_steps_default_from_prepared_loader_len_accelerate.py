# verify: ok
"""Look-alike: `max_steps` left unset and filled on each process from `len(train_loader)`, but the
loader is accelerate's prepared one, which pads the 36 rows so every process gets the same
number of batches (`even_batches=True`, the default); every process plans the same steps.
"""
import math

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

CONFIG = {"epochs": 2, "batch_size": 4, "max_steps": None, "lr": 0.05}


def resolve_schedule(config, batches_per_epoch):
    if config["max_steps"] is None:
        config["max_steps"] = config["epochs"] * batches_per_epoch
    return config


accelerator = Accelerator(cpu=True)
torch.manual_seed(0)
data = TensorDataset(torch.randn(36, 4), torch.randn(36, 1))
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=CONFIG["lr"])
model, opt, loader = accelerator.prepare(model, opt, DataLoader(data, batch_size=CONFIG["batch_size"], shuffle=True))
config = resolve_schedule(dict(CONFIG), len(loader))
step = 0
while step < config["max_steps"]:
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        accelerator.backward(loss)
        opt.step()
        step += 1
        if step == config["max_steps"]:
            break
accelerator.wait_for_everyone()
print("max_steps", config["max_steps"], "batches per epoch", math.ceil(36 / CONFIG["batch_size"] / accelerator.num_processes))
