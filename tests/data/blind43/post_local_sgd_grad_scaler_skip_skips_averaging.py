# verify: hang,error
"""Local SGD with mixed precision: `PostLocalSGDOptimizer` averages the parameters (an all-reduce)
inside its `step()`, and `GradScaler.step` skips that `step()` when this process's own gradients
hold an inf. Without DDP's gradient all-reduce the gradients are local, so the process whose batch
overflowed skips the averaging the other process enters.

Modelled on pytorch/pytorch#76282 (https://github.com/pytorch/pytorch/issues/76282):
"`torch.cuda.amp.GradScaler` may skip parameter synchronization required by post localSGD
optimizer".
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.algorithms.model_averaging.averagers import PeriodicModelAverager
from torch.distributed.optim import PostLocalSGDOptimizer

STEPS = 6
SEED = 20


def load_shard(seed):
    g = torch.Generator().manual_seed(seed)
    bad = torch.rand(STEPS, generator=g) < 0.2  # records from a sensor that skipped normalisation
    x = torch.randn(STEPS, 16, 8, generator=g)
    y = x.sum(-1, keepdim=True)
    x[bad] *= 1e12
    return x, y


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    opt = PostLocalSGDOptimizer(
        optim=torch.optim.SGD(model.parameters(), lr=0.01),
        averager=PeriodicModelAverager(period=1, warmup_steps=0),
    )
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**100)
    xs, ys = load_shard(SEED + dist.get_rank())
    for step in range(STEPS):
        loss = F.mse_loss(model(xs[step]), ys[step])
        scaler.scale(loss).backward()
        scaler.step(opt)  # expect: BCL011
        scaler.update()
        opt.zero_grad()
    print("scale:", scaler.get_scale())
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
