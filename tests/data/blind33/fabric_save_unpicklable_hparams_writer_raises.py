# verify: hang,error
"""A Fabric loop that checkpoints after every epoch and keeps training when a checkpoint fails
("a failed save must never kill a long run").

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/433: under DDP the checkpoint
is pickled on the main process only, so an unpicklable object in it (there, an argparse helper)
raises on that process alone.

The saved state carries the run's hyper-parameters, among them the learning-rate schedule as a
local function. `fabric.save` converts the state on every process, but only global rank 0 pickles
and writes it; `torch.save` raises there ("Can't pickle local object"), the `except` swallows it,
and process 0 skips the barrier that ends `fabric.save`, where process 1 waits. Process 0 goes on
into the next epoch's DDP all-reduce instead.
"""
import os
import shutil
import tempfile

import lightning as L
import torch

ROOT = os.path.join(
    tempfile.gettempdir(),
    f"blind33-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-fabric",
)


def main():
    fabric = L.Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    fabric.seed_everything(0)
    base_lr = 0.05

    def schedule(epoch):
        return base_lr * 0.5 ** epoch

    hparams = {"base_lr": base_lr, "schedule": schedule, "epochs": 3}
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=base_lr)
    model, optimizer = fabric.setup(model, optimizer)
    gen = torch.Generator().manual_seed(fabric.global_rank)
    os.makedirs(ROOT, exist_ok=True)
    for epoch in range(hparams["epochs"]):
        for group in optimizer.param_groups:
            group["lr"] = schedule(epoch)
        for _ in range(4):
            x = torch.randn(8, 4, generator=gen)
            loss = (model(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
            optimizer.zero_grad()
            fabric.backward(loss)
            optimizer.step()
        state = {"model": model, "optimizer": optimizer, "epoch": epoch, "hparams": hparams}
        try:
            fabric.save(os.path.join(ROOT, f"epoch-{epoch}.ckpt"), state)  # expect: BCL011
        except Exception as err:
            fabric.print(f"checkpoint for epoch {epoch} skipped: {err}")
    fabric.barrier()
    shutil.rmtree(ROOT, ignore_errors=True)


if __name__ == "__main__":
    main()
