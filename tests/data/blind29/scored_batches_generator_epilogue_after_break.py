# verify: hang,error
"""A validation generator all-reduces its sample count after its loop; the caller breaks early.

Modelled on https://github.com/AMD-AGI/Primus/pull/854 (an early stop decided from a per-rank
validation loss: one rank leaves alone and the others hang in the next collective). Here the
helper `scored_batches` yields one loss per batch and, once its loop is done, totals the samples
seen with `fabric.all_reduce`. The caller stops reading as soon as a batch loss explodes, to save
time. Process 1's shard holds the corrupted rows (a target scale of 1e3), so its loop breaks and
the generator's epilogue never runs there; process 0 exhausts the generator and waits in the
all-reduce.
"""
from datetime import timedelta

import torch
import torch.nn.functional as F
from lightning.fabric import Fabric
from lightning.fabric.strategies import DDPStrategy


def shard(rank, world, n=32):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(n, 4, generator=g)
    y = x.sum(1, keepdim=True)
    y[21] *= 1e3  # a corrupted target
    return x[rank::world], y[rank::world]


def scored_batches(fabric, model, x, y):
    seen = torch.zeros(())
    with torch.no_grad():
        for xb, yb in zip(x.split(4), y.split(4)):
            seen += len(xb)
            yield F.mse_loss(model(xb), yb).item()
    total = fabric.all_reduce(seen, reduce_op="sum")  # expect: BCL005
    fabric.print(f"validated {int(total)} samples")


def main():
    fabric = Fabric(
        accelerator="cpu",
        devices=2,
        strategy=DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=20)),
    )
    fabric.launch()
    torch.manual_seed(0)
    net = torch.nn.Linear(4, 1)
    model, opt = fabric.setup(net, torch.optim.SGD(net.parameters(), lr=0.05))
    x, y = shard(fabric.global_rank, fabric.world_size)
    for epoch in range(2):
        for xb, yb in zip(x.split(4), y.split(4)):
            loss = F.mse_loss(model(xb), yb.clamp(-10, 10))
            opt.zero_grad()
            fabric.backward(loss)
            opt.step()
        worst = 0.0
        for batch_loss in scored_batches(fabric, model, x, y):
            worst = max(worst, batch_loss)
            if batch_loss > 1e4:
                print(f"rank {fabric.global_rank}: loss exploded, stopping validation early")
                break
        print(f"rank {fabric.global_rank} epoch {epoch}: worst batch {worst:.1f}")
    fabric.barrier()


if __name__ == "__main__":
    main()
