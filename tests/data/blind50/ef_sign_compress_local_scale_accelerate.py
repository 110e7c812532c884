# verify: divergent check=PARAM_DIGEST
"""Scaled sign compression with error feedback (EF-signSGD) by hand under accelerate: each
process sends the signs of its corrected gradient, averaged with `accelerator.reduce`, but
multiplies them back by a scale (the mean magnitude) computed from its own gradient only. The
processes apply updates of different sizes and their parameters drift apart.

Shape of the report: Project-MONAI/tutorials#1458 ("scale factor is computed for each rank for
DDP ... It should be reduced across ranks to use the same scale factor").
https://github.com/Project-MONAI/tutorials/issues/1458
"""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

accelerator = Accelerator(cpu=True)
torch.manual_seed(0)
x = torch.randn(64, 6)
y = x @ torch.randn(6, 1)
loader = accelerator.prepare(DataLoader(TensorDataset(x, y), batch_size=4))
model = torch.nn.Linear(6, 1)
errors = {n: torch.zeros_like(p) for n, p in model.named_parameters()}

for xb, yb in loader:
    loss = torch.nn.functional.mse_loss(model(xb), yb)
    loss.backward()
    with torch.no_grad():
        for n, p in model.named_parameters():
            m = p.grad + errors[n]
            scale = m.abs().mean()  # expect: BCL002
            signs = accelerator.reduce(m.sign(), reduction="mean")
            errors[n] = m - scale * m.sign()
            p -= 0.05 * scale * signs
            p.grad = None

flat = torch.cat([p.detach().flatten() for p in model.parameters()])
PARAM_DIGEST = f"{(flat * torch.arange(1, flat.numel() + 1)).sum().item():.4f}"
accelerator.print("param digest", PARAM_DIGEST)
