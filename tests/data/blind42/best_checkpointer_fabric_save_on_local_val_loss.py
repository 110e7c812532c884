# verify: hang,error
"""A best-model checkpointer whose save (a Fabric save, with its barrier) runs on the processes
whose own validation loss improved.

Modelled on https://github.com/vllm-project/speculators/pull/324 (review: "In distributed training
this conditional can diverge across ranks ... Since `save_checkpoint()` ends with `dist.barrier()`,
if only some ranks enter this block the job can deadlock"). Here `BestCheckpointer.update` compares
this process's validation loss with its best and calls `fabric.save`, which ends with a barrier;
the process whose validation shard drifted away from the training data stops improving after
the first epoch, and the other
process waits in the save's barrier.
"""
import os
import shutil
import tempfile

import torch
from lightning.fabric import Fabric

ROOT = os.path.join(
    tempfile.gettempdir(),
    f"blind42-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-fabric-best",
)
EPOCHS = 6
MIN_DELTA = 0.01
VAL_DRIFT = [0.0, 1.5]  # the second shard's validation set was labelled later, with drift


class BestCheckpointer:
    def __init__(self, fabric, root, min_delta):
        self.fabric, self.root, self.min_delta = fabric, root, min_delta
        self.best = float("inf")

    def update(self, epoch, val_loss, state):
        if val_loss < self.best - self.min_delta:
            self.best = val_loss
            self.fabric.save(os.path.join(self.root, "best.ckpt"), state)  # expect: BCL011
            return True
        return False


def split(shard, seed, drift):
    g = torch.Generator().manual_seed(seed + shard)
    x = torch.randn(128, 8, generator=g)
    w = torch.linspace(-1, 1, 8) + drift * torch.linspace(1, -1, 8)
    return x, x @ w.unsqueeze(1) + 0.1 * torch.randn(128, 1, generator=g)


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    rank = fabric.global_rank
    torch.manual_seed(0)
    net = torch.nn.Linear(8, 1)
    model, opt = fabric.setup(net, torch.optim.SGD(net.parameters(), lr=0.02))
    x, y = split(rank, 10, 0.0)
    vx, vy = split(rank, 20, VAL_DRIFT[rank % 2])
    ckpt = BestCheckpointer(fabric, ROOT, MIN_DELTA)
    for epoch in range(EPOCHS):
        for xb, yb in zip(x.split(16), y.split(16)):
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            opt.zero_grad()
            fabric.backward(loss)
            opt.step()
        with torch.no_grad():
            val_loss = torch.nn.functional.mse_loss(model(vx), vy).item()
        saved = ckpt.update(epoch, val_loss, {"model": model, "epoch": epoch})
        print(f"process {rank} epoch {epoch}: val {val_loss:.3f} saved={saved}")
    fabric.barrier()
    shutil.rmtree(ROOT, ignore_errors=True)


if __name__ == "__main__":
    main()
