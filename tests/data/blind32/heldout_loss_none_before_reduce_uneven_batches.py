# verify: hang,error
"""Held-out loss helper that returns None on a process without batches (accelerate, even_batches=False).

Modelled on https://github.com/coqui-ai/Trainer/pull/121 ("Handle no eval loss"). The loaders are
prepared with `DataLoaderConfiguration(even_batches=False)`, so the 3-row held-out split (one batch
of 4) goes to process 0 and process 1 gets no batch at all. `heldout_loss` returns None where it
saw no row, before the `accelerator.reduce` that sums the losses: process 0 waits in it alone.
"""
import torch
import torch.nn.functional as F
from accelerate import Accelerator, DataLoaderConfiguration
from torch.utils.data import DataLoader, TensorDataset


def heldout_loss(accelerator, model, loader):
    model.eval()
    loss_sum, rows = torch.zeros(()), torch.zeros(())
    for x, y in loader:
        with torch.no_grad():
            loss_sum += F.mse_loss(model(x), y, reduction="sum")
        rows += len(x)
    if rows == 0:
        return None  # no held-out loss on this process
    totals = accelerator.reduce(torch.stack([loss_sum, rows]), reduction="sum")  # expect: BCL005
    return (totals[0] / totals[1]).item()


def main():
    accelerator = Accelerator(dataloader_config=DataLoaderConfiguration(even_batches=False))
    torch.manual_seed(0)
    x = torch.randn(19, 4)
    y = x.sum(dim=1, keepdim=True)
    train = DataLoader(TensorDataset(x[:16], y[:16]), batch_size=4, shuffle=False)
    heldout = DataLoader(TensorDataset(x[16:], y[16:]), batch_size=4, shuffle=False)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    model, opt, train, heldout = accelerator.prepare(model, opt, train, heldout)
    for xb, yb in train:
        opt.zero_grad()
        accelerator.backward(F.mse_loss(model(xb), yb))
        opt.step()
    loss = heldout_loss(accelerator, model, heldout)
    accelerator.print(f"held-out loss {loss}")
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
