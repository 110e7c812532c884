# verify: divergent check=LR
"""A learning rate probed on the main process, broadcast into an int64 tensor on the others.

Modelled on https://github.com/deepspeedai/DeepSpeed/issues/4726 ("Incorrect broadcast results
caused by mismatch dtypes", the sender's and the receivers' tensors built from different values).
The range probe runs on the main process only (`accelerator.on_main_process`), which returns
None elsewhere; `torch.tensor(found or 0)` is then float32 on process 0 and int64 on process 1.
`broadcast` sends 4 bytes into an 8-byte tensor without complaint: process 1 reads the float's
bit pattern as an integer learning rate, around a billion, and trains with it.
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
    lr = torch.tensor(found or 0)
    lr = broadcast(lr)  # expect: BCL007
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
