# verify: ok
"""Hand fix of dtensor_shard_overflow_skips_clip: the overflow flag is all-reduced (MAX).

Every rank skips the step when any shard overflowed, as the sharded grad scalers of fairscale
and torch do, so `clip_grad_norm_` runs on every rank or on none.

Original docstring: loss scaler that checks only its own shard of tensor-parallel gradients for
overflow.

Modelled on hpcaitech/ColossalAI#1175 (https://github.com/hpcaitech/ColossalAI/pull/1175):
"Different pipeline ranks may have different overflow status, if the overflow do not join the
clip grad norm, the all reduce process will be stuck", and facebookresearch/fairscale#179
(https://github.com/facebookresearch/fairscale/pull/179): "the inf check done within the grad
scaler isn't synchronised across all processes when gradients are sharded".

The output layer is column-parallel: a DTensor sharded on dim 0 over the two ranks, each owning
half of the output features. `LossScaler.step()` emulates fp16 by casting the local shard of
each gradient (`to_local()`) to half; on overflow it halves the scale and skips the step, else
it clips with `clip_grad_norm_`, which on DTensor gradients all-reduces the norm. Rank 1's
features have the large targets, so only its shard overflows, in the first two steps.
"""
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor

IN, OUT, MAX_NORM = 4, 6, 1.0


class LossScaler:
    def __init__(self, scale):
        self.scale = scale

    def local_overflow(self, params):
        return any(not torch.isfinite(p.grad.to_local().half()).all() for p in params)

    def any_overflow(self, params):
        flag = torch.tensor([float(self.local_overflow(params))])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        return bool(flag.item())

    def step(self, params, optimizer):
        if self.any_overflow(params):
            self.scale /= 2
            optimizer.zero_grad()
            return False
        for p in params:
            p.grad /= self.scale
        torch.nn.utils.clip_grad_norm_(params, MAX_NORM)
        optimizer.step()
        optimizer.zero_grad()
        return True


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    mesh = init_device_mesh("cpu", (dist.get_world_size(),))
    torch.manual_seed(0)
    weight = torch.nn.Parameter(distribute_tensor(torch.randn(OUT, IN) * 0.1, mesh, [Shard(0)]))
    x = distribute_tensor(torch.randn(8, IN), mesh, [Replicate()])
    target = torch.ones(8, OUT)
    target[:, OUT // 2:] = 3e4  # the features rank 1 owns
    target = distribute_tensor(target, mesh, [Shard(1)])
    optimizer = torch.optim.SGD([weight], lr=1e-9)
    scaler = LossScaler(scale=2.0 ** 6)
    taken = 0
    for _ in range(4):
        out = x @ weight.T
        loss = ((out - target) ** 2).mean() * scaler.scale
        loss.backward()
        taken += scaler.step([weight], optimizer)
    stats = torch.tensor([float(taken), scaler.scale, 0.0])
    dist.all_reduce(stats)
    print(f"rank {rank}: steps taken {taken}, scale {scaler.scale}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
