# verify: ok check=PARAM_DIGEST
"""Hand fix of ef_sign_compress_local_scale_accelerate: the scale is averaged with
`accelerator.reduce` like the signs, so every process applies the same update; the error
feedback stays local, as it should.

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
            local_scale = m.abs().mean()
            scale = accelerator.reduce(local_scale.reshape(1), reduction="mean")[0]
            signs = accelerator.reduce(m.sign(), reduction="mean")
            errors[n] = m - local_scale * m.sign()
            p -= 0.05 * scale * signs
            p.grad = None

flat = torch.cat([p.detach().flatten() for p in model.parameters()])
PARAM_DIGEST = f"{(flat * torch.arange(1, flat.numel() + 1)).sum().item():.4f}"
accelerator.print("param digest", PARAM_DIGEST)
