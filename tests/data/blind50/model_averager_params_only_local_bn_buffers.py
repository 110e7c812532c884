# verify: divergent check=RUNNING_MEAN
"""Local SGD with torch's `PeriodicModelAverager` on a model with BatchNorm: the averager (and
the final averaging before export) averages `model.parameters()` only, while the BatchNorm
running statistics are buffers that each process keeps updating from its own shard. The
exported replicas disagree on `running_mean`.

Shape of the report: TsingZ0/PFLlib#269 (FedAvg aggregates only `model.parameters()`; BatchNorm
running statistics are buffers and are never aggregated).
https://github.com/TsingZ0/PFLlib/pull/269
"""
import torch
import torch.distributed as dist
from torch.distributed.algorithms.model_averaging.averagers import PeriodicModelAverager

dist.init_process_group("gloo")
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 1))
x = torch.randn(64, 6) + torch.linspace(0, 3, 64).unsqueeze(1)  # drifting feature scale
y = x.sum(dim=1, keepdim=True)
xs, ys = x[dist.get_rank()::dist.get_world_size()], y[dist.get_rank()::dist.get_world_size()]
opt = torch.optim.SGD(model.parameters(), lr=0.01)
averager = PeriodicModelAverager(period=2, warmup_steps=0)
for i in range(0, len(xs), 4):
    loss = torch.nn.functional.mse_loss(model(xs[i:i + 4]), ys[i:i + 4])
    loss.backward()
    opt.step()
    averager.average_parameters(model.parameters())  # expect: BCL002
    opt.zero_grad()

for t in model.parameters():  # final averaging before export
    dist.all_reduce(t.data)
    t.data /= dist.get_world_size()
rm = model[1].running_mean
RUNNING_MEAN = f"{(rm * torch.arange(1, rm.numel() + 1)).sum().item():.4f}"
print("running mean digest", RUNNING_MEAN)
dist.destroy_process_group()
