# verify: ok
"""Hand-fixed twin of sweep_config_main_process_only.py.

The main process reads the swept values from its run, then broadcasts the whole config
(`broadcast_object_list`), so every process trains and evaluates with the same values.
"""
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import broadcast_object_list
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
    shared = broadcast_object_list([asdict(cfg)])
    cfg = TrainConfig(**shared[0])

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
            mae = evaluate(accelerator, model, val)
            accelerator.print(f"step {step}: val MAE {mae:.4f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
