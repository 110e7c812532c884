# verify: ok check=LR
"""Hand fix of main_only_lr_probe_int_placeholder_broadcast: the placeholder's dtype is spelled out.

`torch.tensor(found or 0.0, dtype=torch.float32)` is a float32 scalar on every process, so the
broadcast overwrites process 1's placeholder with process 0's probed learning rate.
"""
import copy

import torch
from accelerate import Accelerator
from accelerate.utils import broadcast

LR = None
CANDIDATES = [0.3, 0.1, 0.03, 0.01]


def make_batches(seed: int, n: int):
    g = torch.Generator().manual_seed(seed)
    w = torch.tensor([[0.5], [-1.0], [2.0], [0.0]])
    xs = [torch.randn(8, 4, generator=g) for _ in range(n)]
    return [(x, x @ w + 0.05 * torch.randn(8, 1, generator=g)) for x in xs]


def lr_range_probe(model: torch.nn.Module, batches) -> float:
    losses = {}
    for lr in CANDIDATES:
        trial = copy.deepcopy(model)
        opt = torch.optim.SGD(trial.parameters(), lr=lr)
        for x, y in batches:
            loss = torch.nn.functional.mse_loss(trial(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        losses[lr] = loss.item()
    return min(losses, key=losses.get)


def main() -> None:
    global LR
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    found = accelerator.on_main_process(lr_range_probe)(model, make_batches(1, 6))
    lr = torch.tensor(found or 0.0, dtype=torch.float32)
    lr = broadcast(lr)
    LR = lr.item()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    model, opt = accelerator.prepare(model, opt)
    for x, y in make_batches(2 + accelerator.process_index, 4):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        accelerator.backward(loss)
        opt.step()
    accelerator.print(f"trained with lr {LR}")
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
