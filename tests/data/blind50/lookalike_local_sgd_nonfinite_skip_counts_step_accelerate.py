# verify: ok
"""Look-alike: local SGD with accelerate's `LocalSGD` and a per-process test of a non-finite
loss on this process's own batch, but the test only guards the local update; `local_sgd.step()`
runs for every batch on every process, so the averaging (inside `LocalSGD`) happens at the same
batches everywhere. Under `LocalSGD` the model is in `no_sync`, so the skipped backward runs no
collective either.
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
        if math.isfinite(loss.item()):
            accelerator.backward(loss)
            opt.step()
            opt.zero_grad()
        else:
            accelerator.print("non-finite loss, local update skipped")
        local_sgd.step()

accelerator.wait_for_everyone()
accelerator.print("done")
