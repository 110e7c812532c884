# verify: ok
"""Hand-fixed twin of nonfinite_loss_local_break.py.

The process that sees a non-finite loss sets accelerate's trigger; every process then asks
`check_trigger()` (an all-reduce of the flag) and they all leave the loop at the same step,
before any of them calls `accelerator.backward()`.
"""
import math

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def load_rows():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(16, 5, generator=g)
    y = x.sum(dim=1, keepdim=True)
    y[10] = math.nan
    return TensorDataset(x, y)


def main():
    accelerator = Accelerator()
    torch.manual_seed(0)
    model = torch.nn.Linear(5, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loader = DataLoader(load_rows(), batch_size=2)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    stopped_at = None
    for epoch in range(2):
        for step, (x, y) in enumerate(loader):
            loss = F.mse_loss(model(x), y)
            if not torch.isfinite(loss):
                print(f"process {accelerator.process_index}: non-finite loss at step {step}, stopping")
                accelerator.set_trigger()
            if accelerator.check_trigger():
                stopped_at = (epoch, step)
                break
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        if stopped_at is not None:
            break

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        weight = accelerator.unwrap_model(model).weight
        print(f"finished (stopped at {stopped_at}); weight norm {weight.norm().item():.4f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
