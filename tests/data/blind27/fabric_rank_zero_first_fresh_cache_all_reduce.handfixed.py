# verify: ok
"""Hand fix of fabric_rank_zero_first_fresh_cache_all_reduce.py: the processes agree on `built`.

Process 0's answer (it built the cache) is broadcast after the `rank_zero_first` block, so every
process joins the all-reduce that refreshes the mean, or none does.

Original description: feature cache built under Fabric's `rank_zero_first`; only the process
that built it re-averages.

Modelled on https://github.com/pytorch/pytorch/pull/193043: each rank decides from its own cache
lookup whether it "missed", and only the ranks that missed run the collective that follows, so the
others go on to the next collective and the job hangs.

Here `fabric.rank_zero_first()` lets process 0 build the feature cache while process 1 waits; when
process 1 enters the block the file exists, so `built` is True on process 0 and False on process 1.
Only process 0 then joins the all-reduce that refreshes the global feature mean, while process 1 is
already in `fabric.setup`, whose DDP wrap broadcasts the parameters.
"""
import os
import tempfile

import lightning as L
import torch
from torch import nn

BASE = os.path.join(
    tempfile.gettempdir(),
    f"blind27-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-features",
)


def shard(rank):
    g = torch.Generator().manual_seed(100 + rank)
    x = torch.randn(24, 4, generator=g) + rank
    return x, (x.sum(1) > rank * 4).float()


def build_cache(path, x):
    torch.save({"mean": x.mean(0), "rows": len(x)}, path)


def main():
    fabric = L.Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    os.makedirs(BASE, exist_ok=True)
    cache = os.path.join(BASE, "features.pt")
    x, y = shard(fabric.global_rank)

    with fabric.rank_zero_first():
        built = not os.path.exists(cache)
        if built:
            build_cache(cache, x)
        mean = torch.load(cache)["mean"]
    built = fabric.broadcast(built, src=0)

    if built:
        # a fresh cache holds one shard's mean: refresh it with every process's rows
        mean = fabric.all_reduce(x.mean(0), reduce_op="mean")

    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = fabric.setup(model, opt)
    for i in range(0, len(x), 8):
        xb, yb = (x[i:i + 8] - mean), y[i:i + 8]
        loss = nn.functional.binary_cross_entropy_with_logits(model(xb).squeeze(1), yb)
        opt.zero_grad()
        fabric.backward(loss)
        opt.step()
    fabric.barrier()
    if fabric.global_rank == 0:
        os.remove(cache)
        os.rmdir(BASE)
    fabric.print("done")


if __name__ == "__main__":
    main()
