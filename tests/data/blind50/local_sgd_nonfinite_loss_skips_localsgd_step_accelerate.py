# verify: hang,error
"""Local SGD with accelerate's `LocalSGD`: a batch whose loss is not finite is skipped with
`continue`, before `local_sgd.step()`. The process whose shard holds the corrupt record counts
one step fewer, so it averages the parameters (a barrier and one reduce per parameter inside
`LocalSGD`) a different number of times than its peer.

Shape of the report: Project-MONAI/monai-physio#137 (review: a `continue` on a non-finite loss,
decided on each rank's own batch, desynchronises the collectives that follow).
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
        if not math.isfinite(loss.item()):
            accelerator.print("non-finite loss, batch skipped")
            continue
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
        local_sgd.step()  # expect: BCL011

accelerator.wait_for_everyone()
accelerator.print("done")
