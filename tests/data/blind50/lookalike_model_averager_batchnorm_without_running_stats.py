# verify: ok check=PARAM_DIGEST
"""Look-alike: local SGD with `PeriodicModelAverager` averaging `model.parameters()` only, on a
model with BatchNorm, each process on its own shard; but the BatchNorm is built with
`track_running_stats=False`, so it holds no buffers and normalises with batch statistics in
eval too. The final averaging of the parameters leaves every replica the same.
"""
import torch
import torch.distributed as dist
from torch.distributed.algorithms.model_averaging.averagers import PeriodicModelAverager

dist.init_process_group("gloo")
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(6, 8), torch.nn.BatchNorm1d(8, track_running_stats=False), torch.nn.Linear(8, 1)
)
x = torch.randn(64, 6) + torch.linspace(0, 3, 64).unsqueeze(1)  # drifting feature scale
y = x.sum(dim=1, keepdim=True)
xs, ys = x[dist.get_rank()::dist.get_world_size()], y[dist.get_rank()::dist.get_world_size()]
opt = torch.optim.SGD(model.parameters(), lr=0.01)
averager = PeriodicModelAverager(period=2, warmup_steps=0)
for i in range(0, len(xs), 4):
    loss = torch.nn.functional.mse_loss(model(xs[i:i + 4]), ys[i:i + 4])
    loss.backward()
    opt.step()
    averager.average_parameters(model.parameters())
    opt.zero_grad()

for t in model.parameters():  # final averaging before export
    dist.all_reduce(t.data)
    t.data /= dist.get_world_size()
flat = torch.cat([p.detach().flatten() for p in model.parameters()])
PARAM_DIGEST = f"{(flat * torch.arange(1, flat.numel() + 1)).sum().item():.4f}"
print("param digest", PARAM_DIGEST, "buffers", len(list(model.buffers())))
dist.destroy_process_group()
