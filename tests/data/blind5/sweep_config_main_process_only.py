# verify: hang
"""Hyperparameters from a sweep run that exists on the main process only.

Modelled on https://github.com/huggingface/accelerate/issues/1040 ("WandB config parameters only
accessible by GPU 0") and https://github.com/wandb/wandb/issues/3883 (a sweep over DDP runs:
`wandb.config` is only filled in the process that called `wandb.init`).

The run is created on the main process only (as `init_trackers` does), and the swept values are
read back from it there; the other process keeps the dataclass defaults. Training steps match,
but `eval_every` is 3 on process 0 and 4 on process 1, so process 0 enters `evaluate()` (a
`gather_for_metrics` per batch) at step 3 while process 1 is in the next step's DDP backward.
"""
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class TrainConfig:
    lr: float = 0.05
    eval_every: int = 4
    steps: int = 8


class SweepRun:
    """Stands in for `wandb.init()` under a sweep agent, which fills `run.config`."""

    SWEPT = {"lr": 0.02, "eval_every": 3}

    def __init__(self, config):
        self.config = {**config, **self.SWEPT}


def evaluate(accelerator, model, loader):
    errors = []
    with torch.no_grad():
        for x, y in loader:
            errors.append(accelerator.gather_for_metrics((model(x) - y).abs()))
    return torch.cat(errors).mean().item()


def main():
    accelerator = Accelerator()
    cfg = TrainConfig()
    if accelerator.is_main_process:
        run = SweepRun(asdict(cfg))
        cfg = TrainConfig(**run.config)

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(5)
    x = torch.randn(40, 3, generator=g)
    data = TensorDataset(x, x @ torch.tensor([[1.0], [-2.0], [0.5]]))
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    train = DataLoader(data, batch_size=2, shuffle=True)
    val = DataLoader(data, batch_size=8)
    model, optimizer, train, val = accelerator.prepare(model, optimizer, train, val)

    batches = iter(train)
    for step in range(1, cfg.steps + 1):
        x, y = next(batches)
        accelerator.backward(F.mse_loss(model(x), y))
        optimizer.step()
        optimizer.zero_grad()
        if step % cfg.eval_every == 0:
            mae = evaluate(accelerator, model, val)  # expect: BCL005
            accelerator.print(f"step {step}: val MAE {mae:.4f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
