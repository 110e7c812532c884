# verify: divergent check=SKIPPED_AT
"""GradScaler's `unscale_` records `found_inf` from this process's own gradients, and the
gradients are averaged by hand only afterwards: the process whose batch overflowed skips the step
while the other steps with the infinite average it received, so the processes skip different
steps and their loss scales drift apart.

Modelled on pytorch/pytorch#136009 (https://github.com/pytorch/pytorch/issues/136009):
"Inconsistent Gradients with DDP and AMP when GradScaler Scales Differ Across Processes".
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F

STEPS = 6
SEED = 20
SKIPPED_AT = ""


def load_shard(seed):
    g = torch.Generator().manual_seed(seed)
    bad = torch.rand(STEPS, generator=g) < 0.2  # records from a sensor that skipped normalisation
    x = torch.randn(STEPS, 16, 8, generator=g)
    y = x.sum(-1, keepdim=True)
    x[bad] *= 1e12
    return x, y


def main():
    global SKIPPED_AT
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**100)
    xs, ys = load_shard(SEED + dist.get_rank())
    skipped = []
    for step in range(STEPS):
        loss = F.mse_loss(model(xs[step]), ys[step])
        scaler.scale(loss).backward()
        scaler.unscale_(opt)  # expect: BCL002
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()
        before = scaler.get_scale()
        scaler.step(opt)
        scaler.update()
        if scaler.get_scale() < before:
            skipped.append(step)
        opt.zero_grad()
    SKIPPED_AT = ",".join(map(str, skipped))
    print("skipped steps:", SKIPPED_AT, "scale:", scaler.get_scale())
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
