# verify: ok
"""Look-alike: the same `rank_zero_first` feature cache and a per-process `built` flag, used only locally.

Process 0 builds the cache while process 1 waits, so `built` differs between the processes, as in
fabric_rank_zero_first_fresh_cache_all_reduce.py. Here the flag only chooses what this process
prints; the all-reduce that refreshes the global feature mean is made by every process, every run.
"""
import os
import tempfile

import lightning as L
import torch
from torch import nn

BASE = os.path.join(
    tempfile.gettempdir(),
    f"blind27-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-features-local",
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
        rows = torch.load(cache)["rows"]

    source = "built" if built else "reused"
    print(f"[process {fabric.global_rank}] feature cache {source} ({rows} rows)")
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
