# verify: ok
"""Hand-fixed `main_preview_leaves_eval_mode_norm_skips_sync`: the preview restores the training mode.

`preview` remembers `model.training` and restores it in a `finally:`, so the main process is back
in training mode before its next step and its norm layer all-reduces its statistics at every step,
as process 1's does.
"""
import json
import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.randn(32, 4)
Y = (X[:, :1] * 2 - X[:, 1:2]).tanh()
PREVIEW_X = torch.randn(3, 4)
SCRATCH = os.path.join(
    tempfile.gettempdir(), f"blind15-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}"
)


class RunningCrossNorm(nn.Module):
    def __init__(self, dim, momentum=0.1, eps=1e-5):
        super().__init__()
        self.register_buffer("running_mean", torch.zeros(dim))
        self.register_buffer("running_var", torch.ones(dim))
        self.momentum, self.eps = momentum, eps

    def forward(self, x):
        if self.training:
            dim = x.shape[1]
            packed = torch.cat([x.sum(0), (x * x).sum(0), torch.tensor([float(x.shape[0])])]).detach()
            dist.all_reduce(packed)
            mean = packed[:dim] / packed[-1]
            var = packed[dim : 2 * dim] / packed[-1] - mean * mean
            with torch.no_grad():
                self.running_mean.lerp_(mean, self.momentum)
                self.running_var.lerp_(var, self.momentum)
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean) / torch.sqrt(var + self.eps)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 8)
        self.norm = RunningCrossNorm(8)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        return self.out(torch.relu(self.norm(self.inp(x))))


def preview(model, x, path):
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            rows = model(x).squeeze(1).tolist()
    finally:
        model.train(was_training)
    with open(path, "w") as f:
        json.dump({"preview": rows}, f)


def main():
    accelerator = Accelerator(cpu=True)
    os.makedirs(SCRATCH, exist_ok=True)
    model = Regressor()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loader = DataLoader(TensorDataset(X, Y), batch_size=4)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    step = 0
    for epoch in range(2):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = (model(x) - y).pow(2).mean()
            accelerator.backward(loss)
            optimizer.step()
            step += 1
            if step == 2 and accelerator.is_main_process:
                preview(accelerator.unwrap_model(model), PREVIEW_X, os.path.join(SCRATCH, "preview.json"))
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
