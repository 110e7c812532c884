# verify: divergent check=VAL_LOSSES
"""Validation totals passed to `accelerator.reduce` as if it reduced in place; the result is dropped.

Modelled on https://github.com/huggingface/accelerate/pull/513, whose description shows
`accelerator.reduce(a, reduction='sum')  # don't change a` next to `a = accelerator.reduce(...)`:
accelerate's reduce clones its input, all-reduces the clone and returns it. Written like
`torch.distributed.all_reduce(stats)`, the call runs its collective on every process and each
process then divides its own shard's loss sum by its own count.
"""
import torch
from accelerate import Accelerator
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

VAL_LOSSES = []


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    w = torch.randn(6, 1)
    x_train = torch.randn(64, 6)
    y_train = x_train @ w + 0.1 * torch.randn(64, 1)
    x_val = torch.randn(20, 6)
    y_val = x_val @ w + torch.linspace(-1, 1, 20)[:, None]
    model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 1))
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    train_loader = DataLoader(TensorDataset(x_train, y_train), batch_size=8, shuffle=True)
    val_loader = DataLoader(TensorDataset(x_val, y_val), batch_size=5)
    model, opt, train_loader, val_loader = accelerator.prepare(model, opt, train_loader, val_loader)

    for epoch in range(3):
        model.train()
        for x, y in train_loader:
            loss = nn.functional.mse_loss(model(x), y)
            accelerator.backward(loss)
            opt.step()
            opt.zero_grad()
        model.eval()
        val_stats = torch.zeros(2, device=accelerator.device)  # loss sum, rows
        with torch.no_grad():
            for x, y in val_loader:
                val_stats[0] += nn.functional.mse_loss(model(x), y, reduction="sum")
                val_stats[1] += y.shape[0]
        accelerator.reduce(val_stats, reduction="sum")  # expect: BCL010
        val_loss = (val_stats[0] / val_stats[1]).item()
        VAL_LOSSES.append(round(val_loss, 5))
        accelerator.print(f"epoch {epoch}: val loss {val_loss:.4f}")
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
