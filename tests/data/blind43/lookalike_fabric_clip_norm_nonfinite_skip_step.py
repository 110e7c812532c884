# verify: ok
"""Look-alike of `fabric_loss_spike_rollback_local_loss`: the same shard with unnormalised
records, and a step is skipped on a numerical fault, but the test reads the gradient norm that
`fabric.clip_gradients` returns after DDP has averaged the gradients, so a non-finite norm on one
process is a non-finite norm on every process and all of them skip the same steps.
"""
import os

import torch
import torch.nn.functional as F
from lightning.fabric import Fabric

STEPS = 6
SEED = 20


def load_shard(seed):
    g = torch.Generator().manual_seed(seed)
    bad = torch.rand(STEPS, generator=g) < 0.2  # records from a sensor that skipped normalisation
    x = torch.randn(STEPS, 16, 8, generator=g)
    y = x.sum(-1, keepdim=True)
    x[bad] *= 1e30  # the loss overflows float32
    return x, y


def main():
    fabric = Fabric(accelerator="cpu", strategy="ddp", devices=int(os.environ["WORLD_SIZE"]))
    fabric.launch()
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model, opt = fabric.setup(model, opt)
    xs, ys = load_shard(SEED + fabric.global_rank)
    skipped = 0
    for step in range(STEPS):
        loss = F.mse_loss(model(xs[step]), ys[step])
        fabric.backward(loss)
        norm = fabric.clip_gradients(model, opt, max_norm=1.0, error_if_nonfinite=False)
        if not torch.isfinite(norm):
            print(f"step {step}: non-finite gradient norm (local loss {loss.item():.3g}), skipping")
            opt.zero_grad()
            skipped += 1
            continue
        opt.step()
        opt.zero_grad()
    print("skipped", skipped)
    fabric.barrier()


if __name__ == "__main__":
    main()
