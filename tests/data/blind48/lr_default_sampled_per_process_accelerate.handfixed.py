# verify: ok check=W_SUM
"""Hand fix of lr_default_sampled_per_process_accelerate: the drawn default is taken from process
0 (`accelerate.utils.broadcast` of a one-element tensor) before the optimizer is built.
"""
import argparse
import random

import torch
from accelerate import Accelerator
from accelerate.utils import broadcast


def fill_defaults(args):
    if args.lr is None:
        drawn = torch.tensor([10 ** random.uniform(-3, -1)], dtype=torch.float64)
        args.lr = broadcast(drawn, from_process=0).item()
    return args


parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=None)
parser.add_argument("--steps", type=int, default=5)

accelerator = Accelerator(cpu=True)
args = fill_defaults(parser.parse_args([]))
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
