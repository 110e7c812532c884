# verify: ok
"""Hand fix of local_sgd_nonfinite_loss_skips_localsgd_step_accelerate: the non-finite test is
summed over the processes with `accelerator.reduce`, so every process skips the same batches and
`LocalSGD` counts the same steps everywhere.

https://github.com/Project-MONAI/monai-physio/pull/137
"""
import math

import torch
from accelerate import Accelerator
from accelerate.local_sgd import LocalSGD
from torch.utils.data import DataLoader, TensorDataset

accelerator = Accelerator(cpu=True)
torch.manual_seed(0)
x = torch.randn(48, 4)
y = x.sum(dim=1, keepdim=True)
x[29, 2] = float("nan")  # one corrupt record, in the 8th batch of 4
loader = DataLoader(TensorDataset(x, y), batch_size=4, shuffle=False)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
model, opt, loader = accelerator.prepare(model, opt, loader)

with LocalSGD(accelerator=accelerator, model=model, local_sgd_steps=3, enabled=True) as local_sgd:
    for xb, yb in loader:
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        bad = torch.tensor([0.0 if math.isfinite(loss.item()) else 1.0])
        if accelerator.reduce(bad, reduction="sum").item() > 0:
            accelerator.print("non-finite loss somewhere, batch skipped by every process")
            continue
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
        local_sgd.step()

accelerator.wait_for_everyone()
accelerator.print("done")
