# verify: ok
"""Look-alike of `perplexity_overflow_error_skips_ddp_backward`: `math.exp(loss)` still overflows
on the process that drew the unnormalised record, and the `except OverflowError` is still there,
but it only turns the perplexity into inf for the progress line, after the backward and the step
that every process runs.
"""
import math

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
    x[bad] *= 1e6
    return x, y


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model, opt = accelerator.prepare(model, opt)
    xs, ys = load_shard(SEED + accelerator.process_index)
    for step in range(STEPS):
        loss = F.mse_loss(model(xs[step]), ys[step])
        accelerator.backward(loss)
        accelerator.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
        try:
            ppl = math.exp(loss.item())
        except OverflowError:
            print(f"step {step}: loss {loss.item():.3g}, perplexity overflowed")
            continue
        print(f"step {step}: loss {loss.item():.3f} ppl {ppl:.3f}")
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
