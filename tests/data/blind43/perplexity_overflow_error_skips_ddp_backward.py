# verify: hang,error
"""The progress line computes the perplexity with `math.exp(loss)` before the backward; a loss
spike past 709 raises `OverflowError` on the process that drew the bad record, and the `except`
treats the batch as diverged and skips it, so that process runs one DDP backward (gradient
all-reduce) fewer than the other.

Modelled on modelscope/FunASR#2241 (https://github.com/modelscope/FunASR/issues/2241): "math.exp
can lead to overflow", a perplexity `math.exp` in the trainer that ends the training.
"""
import math

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

STEPS = 6
SEED = 20


def load_shard(seed):
    g = torch.Generator().manual_seed(seed)
    bad = torch.rand(STEPS, generator=g) < 0.2  # records from a sensor that skipped normalisation
    x = torch.randn(STEPS, 16, 8, generator=g)
    y = x.sum(-1, keepdim=True)
    x[bad] *= 1e6
    return x, y


def progress(step, loss):
    ppl = math.exp(loss)
    print(f"step {step}: loss {loss:.3f} ppl {ppl:.3f}")


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    xs, ys = load_shard(SEED + dist.get_rank())
    for step in range(STEPS):
        loss = F.mse_loss(model(xs[step]), ys[step])
        try:
            progress(step, loss.item())
        except OverflowError:
            print(f"step {step}: loss {loss.item():.3g} diverged, skipping batch")
            opt.zero_grad()
            continue
        loss.backward()  # expect: BCL011
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
