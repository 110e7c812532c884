# verify: hang
"""``fabric.save`` inside a helper decorated with ``rank_zero_only``.

Modelled on alan-turing-institute/autocast#386
(https://github.com/alan-turing-institute/autocast/pull/386: "``trainer.save_checkpoint()`` is a
collective operation - it ends in a ``strategy.barrier()``, which every rank must enter", called
where only rank 0 entered it) and pico-lm/pico-train#44 (https://github.com/pico-lm/pico-train/pull/44:
rank tests replaced by Lightning's ``rank_zero_only`` decorator). The validation loss is averaged
with ``fabric.all_reduce``, so every process agrees when it improves; the export helper
``export_best()`` is decorated ``@rank_zero_only`` because "only one process should write the
file". Its body, ``fabric.save(...)``, ends in a barrier that only rank 0 enters, while rank 1
goes on to the next epoch.
"""
import os
import tempfile

import lightning as L
import torch
from lightning.fabric.utilities.rank_zero import rank_zero_only


@rank_zero_only
def export_best(fabric, path, state):
    fabric.save(path, state)  # expect: BCL011


def main():
    fabric = L.Fabric(accelerator="cpu", devices=int(os.environ.get("LOCAL_WORLD_SIZE", "2")), strategy="ddp")
    fabric.launch()
    out_dir = os.path.join(
        tempfile.gettempdir(), f"blind9-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-fabric"
    )
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    model, opt = fabric.setup(model, opt)
    gen = torch.Generator().manual_seed(20 + fabric.global_rank)
    x_val = torch.randn(8, 3, generator=gen)
    best = float("inf")
    for epoch in range(3):
        for _ in range(2):
            x = torch.randn(4, 3, generator=gen)
            loss = torch.nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))
            opt.zero_grad()
            fabric.backward(loss)
            opt.step()
        with torch.no_grad():
            val = torch.nn.functional.mse_loss(model(x_val), x_val.sum(1, keepdim=True))
        val = fabric.all_reduce(val, reduce_op="mean").item()
        if val < best:
            best = val
            export_best(fabric, os.path.join(out_dir, "best.ckpt"), {"model": model, "epoch": epoch, "val": val})
    fabric.print(f"best validation loss {best:.4f}")
    fabric.barrier()


if __name__ == "__main__":
    main()
