# verify: hang
"""A `break` on a non-finite loss taken by the one process whose batch holds a NaN label.

Modelled on https://github.com/ai2cm/ace/pull/850 ("there is a chance that there is only an NaN
loss on a subset of the ranks ... the other ranks call torch.backward, which is a collective all
reduce", and they hang) and https://github.com/huggingface/accelerate/pull/1940 (which added
`set_trigger()`/`check_trigger()` for this).

16 rows, batches of 2 per process: the prepared dataloader hands process 1 batches 1, 3, 5, 7,
and row 10 has a NaN label (an empty cell in the CSV), so process 1 sees a NaN loss at its third
step and leaves the epoch loop. Process 0's loss is finite; it goes on to
`accelerator.backward()`, whose DDP gradient all-reduce process 1 never joins.
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
                stopped_at = (epoch, step)
                break
            accelerator.backward(loss)  # expect: BCL011
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
