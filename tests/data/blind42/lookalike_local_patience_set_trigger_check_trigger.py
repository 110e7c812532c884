# verify: ok
"""Look-alike: each process steps its own relative-improvement stopper with its own validation
loss, as in a local early-stopping bug; but a process whose counter reaches `PATIENCE` only calls
`accelerator.set_trigger()`, and the loop leaves on `accelerator.check_trigger()`, which
all-reduces the flag, so every process stops in the same epoch (the epoch the first process
runs out of patience).
"""
from dataclasses import dataclass

import torch
from accelerate import Accelerator

EPOCHS = 12
PATIENCE = 2
MIN_IMPROVEMENT = 0.05
VAL_NOISE = [0.0, 3.0]  # the second shard's validation labels come from a noisy annotator


@dataclass
class EarlyStoppingState:
    counter: int = 0
    best_metric: float = float("inf")
    best_step: int = 0

    def step(self, metric, current_step, min_improvement):
        improvement = (self.best_metric - metric) / self.best_metric
        if improvement > min_improvement:
            self.counter = 0
        else:
            self.counter += 1
        if metric < self.best_metric:
            self.best_metric, self.best_step = metric, current_step
        return self.counter >= PATIENCE


def split(shard, seed, noise):
    g = torch.Generator().manual_seed(seed + shard)
    x = torch.randn(96, 8, generator=g)
    return x, x @ torch.linspace(-1, 1, 8).unsqueeze(1) + noise * torch.randn(96, 1, generator=g)


def main():
    accelerator = Accelerator(cpu=True)
    shard = accelerator.process_index
    torch.manual_seed(0)
    net = torch.nn.Linear(8, 1)
    model, opt = accelerator.prepare(net, torch.optim.SGD(net.parameters(), lr=0.05))
    x, y = split(shard, 30, 0.0)
    vx, vy = split(shard, 40, VAL_NOISE[shard % 2])
    stopper = EarlyStoppingState()
    for epoch in range(EPOCHS):
        model.train()
        for xb, yb in zip(x.split(16), y.split(16)):
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            opt.zero_grad()
            accelerator.backward(loss)
            opt.step()
        model.eval()
        with torch.no_grad():
            val_loss = torch.nn.functional.mse_loss(model(vx), vy).item()
        if stopper.step(val_loss, epoch, MIN_IMPROVEMENT):
            print(f"process {shard}: out of patience at epoch {epoch}, best {stopper.best_metric:.3f}")
            accelerator.set_trigger()
        if accelerator.check_trigger():
            break
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
