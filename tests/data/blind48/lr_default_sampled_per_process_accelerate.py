# verify: divergent check=W_SUM
"""A learning rate left unset on the command line and filled by a log-uniform draw on each process.

Modelled on https://github.com/optuna/optuna-integration/issues/59: with the regular DDP strategy
the search script runs once per process and draws a different set of hyperparameters on each
rank. Here `fill_defaults` draws the missing learning rate from the unseeded `random` module on
every process; the gradients are averaged by DDP, but each process steps with its own rate, so
the weights part ways.
"""
import argparse
import random

import torch
from accelerate import Accelerator


def fill_defaults(args):
    if args.lr is None:
        args.lr = 10 ** random.uniform(-3, -1)  # expect: BCL002
    return args


parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=None)
parser.add_argument("--steps", type=int, default=5)
args = fill_defaults(parser.parse_args([]))

accelerator = Accelerator(cpu=True)
torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=args.lr)
model, opt = accelerator.prepare(model, opt)
gen = torch.Generator().manual_seed(accelerator.process_index)
for _ in range(args.steps):
    x, y = torch.randn(8, 4, generator=gen), torch.randn(8, 1, generator=gen)
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    accelerator.backward(loss)
    opt.step()
W_SUM = round(sum(p.sum().item() for p in model.parameters()), 6)
accelerator.wait_for_everyone()
print("lr", args.lr, "W_SUM", W_SUM)
