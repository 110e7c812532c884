# verify: ok
"""Hand fix of early_stopper_updated_in_main_only_hook.py: the main-only hook only prints; every
process updates its stopper with the (gathered, equal) validation loss, so all stop together.
"""
import torch
from accelerate import Accelerator
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

MAX_EPOCHS = 12
PATIENCE = 2
MIN_DELTA = 0.05


class EarlyStopper:
    def __init__(self, patience, min_delta):
        self.patience = patience
        self.min_delta = min_delta
        self.best = float("inf")
        self.bad_epochs = 0

    def update(self, value):
        if value < self.best - self.min_delta:
            self.best = value
            self.bad_epochs = 0
        else:
            self.bad_epochs += 1

    def should_stop(self):
        return self.bad_epochs >= self.patience


def make_data(n, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 8, generator=gen)
    y = x @ torch.linspace(-1, 1, 8).unsqueeze(1) + 0.3 * torch.randn(n, 1, generator=gen)
    return TensorDataset(x, y)


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    train = DataLoader(make_data(64, 1), batch_size=8, shuffle=False)
    valid = DataLoader(make_data(32, 2), batch_size=8)
    model, opt, train, valid = accelerator.prepare(model, opt, train, valid)
    stopper = EarlyStopper(PATIENCE, MIN_DELTA)

    @accelerator.on_main_process
    def on_valid_end(epoch, val_loss):
        print(f"epoch {epoch}: val_loss {val_loss:.4f}", flush=True)

    for epoch in range(MAX_EPOCHS):
        model.train()
        for xb, yb in train:
            loss = nn.functional.mse_loss(model(xb), yb)
            opt.zero_grad()
            accelerator.backward(loss)
            opt.step()
        model.eval()
        errors = []
        with torch.no_grad():
            for xb, yb in valid:
                errors.append(accelerator.gather_for_metrics((model(xb) - yb) ** 2))
        val_loss = torch.cat(errors).mean().item()
        on_valid_end(epoch, val_loss)
        stopper.update(val_loss)
        if stopper.should_stop():
            break
    accelerator.print("stopped after epoch", epoch)


if __name__ == "__main__":
    main()
