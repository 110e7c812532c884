# verify: hang,error
"""Instead of skipping a step on overflow, the batch is replayed with a smaller loss scale until
the scaled loss is finite. The test reads this process's own scaled loss, so the process whose
batch holds an unnormalised record runs `accelerator.backward` (DDP's gradient all-reduce) several
more times than the other.

Modelled on NVIDIA/apex#114 (https://github.com/NVIDIA/apex/issues/114): "repeat after overflow,
not skip?", a replay loop around the scaled backward.
"""
import torch
import torch.nn.functional as F
from accelerate import Accelerator

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
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model, opt = accelerator.prepare(model, opt)
    xs, ys = load_shard(SEED + accelerator.process_index)
    for step in range(STEPS):
        scale = 2.0**100
        replays = 0
        while True:
            loss = F.mse_loss(model(xs[step]), ys[step])
            scaled = loss * scale
            accelerator.backward(scaled)  # expect: BCL011
            if torch.isfinite(scaled):
                break
            opt.zero_grad()
            scale /= 2.0**16
            replays += 1
        for p in model.parameters():
            p.grad /= scale
        accelerator.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        if replays:
            print(f"step {step}: replayed {replays} times, scale {scale:.3g}")
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
