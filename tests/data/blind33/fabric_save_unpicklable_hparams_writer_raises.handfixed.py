# verify: ok
"""Hand fix: only the plain values of the hyper-parameters go into the checkpoint (callables are
left out), so global rank 0's `torch.save` succeeds and both processes complete `fabric.save`.

The broken program's report: https://github.com/Lightning-AI/pytorch-lightning/issues/433
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
        plain = {k: v for k, v in hparams.items() if not callable(v)}
        state = {"model": model, "optimizer": optimizer, "epoch": epoch, "hparams": plain}
        try:
            fabric.save(os.path.join(ROOT, f"epoch-{epoch}.ckpt"), state)
        except Exception as err:
            fabric.print(f"checkpoint for epoch {epoch} skipped: {err}")
    fabric.barrier()
    shutil.rmtree(ROOT, ignore_errors=True)


if __name__ == "__main__":
    main()
