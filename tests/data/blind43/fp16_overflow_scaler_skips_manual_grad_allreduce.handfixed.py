# verify: ok
"""A hand-written dynamic loss scaler checks for overflow on this process's gradients and returns
before it averages them, so a process whose shard holds an unnormalised record skips the gradient
all-reduce that the other process enters.

Hand fix: the overflow flag is all-reduced (MAX) before the scaler decides, so every process
skips the same steps.

Modelled on bme-chatbots/dialogue-generation#10
(https://github.com/bme-chatbots/dialogue-generation/issues/10): "Gradient overflow on distributed
training. Training stuck."
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F

STEPS = 6
SEED = 20


def load_shard(seed):
    g = torch.Generator().manual_seed(seed)
    bad = torch.rand(STEPS, generator=g) < 0.2  # records from a sensor that skipped normalisation
    x = torch.randn(STEPS, 16, 8, generator=g)
    y = x.sum(-1, keepdim=True)
    x[bad] *= 1e12
    return x, y


class DynamicLossScaler:
    def __init__(self, params, init_scale=2.0**100):
        self.params = list(params)
        self.scale = init_scale

    def has_overflow(self):
        # agreed by every process: one overflow anywhere skips the step everywhere
        local = any(not torch.isfinite(p.grad).all() for p in self.params)
        flag = torch.tensor([float(local)])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        return bool(flag.item())

    def allreduce_grads(self):
        for p in self.params:
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()

    def step(self, optimizer):
        if self.has_overflow():
            self.scale /= 2
            optimizer.zero_grad()
            return False
        self.allreduce_grads()
        for p in self.params:
            p.grad /= self.scale
        optimizer.step()
        optimizer.zero_grad()
        return True


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = DynamicLossScaler(model.parameters())
    xs, ys = load_shard(SEED + dist.get_rank())
    for step in range(STEPS):
        loss = F.mse_loss(model(xs[step]), ys[step])
        (loss * scaler.scale).backward()
        if not scaler.step(opt):
            print(f"step {step}: gradient overflow, skipping, scale now {scaler.scale:.3g}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
