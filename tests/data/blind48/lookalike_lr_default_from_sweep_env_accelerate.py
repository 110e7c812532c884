# verify: ok check=W_SUM
"""Look-alike: the learning rate's default is filled on each process, from the environment the
sweep agent set for the whole launch (`SWEEP_LR`, or 0.05 when unset); torchrun hands every
process the same environment, so every process steps with the same rate. The per-process
generator only varies the data, whose gradients DDP averages.
"""
import argparse
import os

import torch
from accelerate import Accelerator


def fill_defaults(args):
    if args.lr is None:
        args.lr = float(os.environ.get("SWEEP_LR", "0.05"))
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
