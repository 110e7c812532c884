# verify: ok
"""Look-alike of sharded_owner_overflow_flag_skips_param_broadcast: each rank decides the skip
on its own, without a collective, but it checks every parameter's gradient after the all-reduce
that averaged them, so the gradients it checks, and the decision, are the same on every rank.
"""
import torch
import torch.distributed as dist

STEPS = 6
GLITCH_STEP = 2


def make_batch(step, rank, world):
    g = torch.Generator().manual_seed(100 + step)
    x = torch.randn(16, 4, generator=g)
    if step == GLITCH_STEP:
        x[7, 2] = 1e30  # a sensor glitch in one row of the global batch
    y = x.sum(dim=1, keepdim=True).clamp(-10, 10) * 0.5
    return x[rank::world], y[rank::world]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    params = dict(model.named_parameters())
    owner = {"weight": 0, "bias": 1 % world}
    mine = [p for name, p in params.items() if owner[name] == rank]
    opt = torch.optim.SGD(mine, lr=0.05)
    scale = 2.0 ** 16

    for step in range(STEPS):
        x, y = make_batch(step, rank, world)
        model.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        (loss * scale).backward()
        flat = torch.cat([p.grad.flatten() for p in params.values()])
        dist.all_reduce(flat)
        flat /= world
        offset = 0
        for p in params.values():
            p.grad.copy_(flat[offset:offset + p.numel()].view_as(p))
            offset += p.numel()

        overflow = False
        for p in params.values():
            p.grad /= scale
            if not torch.isfinite(p.grad).all():
                overflow = True
        if overflow:
            scale /= 2
            print(f"step {step}: overflow, loss scale now {scale}")
            continue
        opt.step()
        for name, p in params.items():
            dist.broadcast(p.data, src=owner[name])
    print(f"rank {rank} done, weight {model.weight.data.flatten().tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
