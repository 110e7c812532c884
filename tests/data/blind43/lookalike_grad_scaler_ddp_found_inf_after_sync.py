# verify: ok check=SKIPPED_AT
"""Look-alike of `grad_scaler_unscale_before_manual_grad_allreduce`: one process's batch overflows
the scaled loss and each process's GradScaler decides on its own, but the gradients it inspects
are DDP's averaged ones (the all-reduce runs inside the backward), so every process finds the same
inf and skips the same steps.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

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
    model = DDP(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**100)
    xs, ys = load_shard(SEED + dist.get_rank())
    skipped = []
    for step in range(STEPS):
        loss = F.mse_loss(model(xs[step]), ys[step])
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
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
