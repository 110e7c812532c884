# verify: ok
"""Look-alike of rank0_callback_dcp_save.py: correct.

The checkpoint callback is still registered on rank 0 only, but it writes a plain
`torch.save(model.state_dict())`, which is local: the model is replicated (gradients averaged
every step), so one rank's copy is the checkpoint.
"""
import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn.functional as F

RUN_TAG = f"{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"  # same on every rank
CKPT_ROOT = os.path.join(tempfile.gettempdir(), f"ckpt-{RUN_TAG}")


class LossPrinter:
    def on_epoch_end(self, trainer, epoch, loss):
        print(f"rank {trainer.rank} epoch {epoch}: loss {loss:.4f}")


class TorchSaveCheckpoint:
    def __init__(self, root):
        self.root = root

    def on_epoch_end(self, trainer, epoch, loss):
        os.makedirs(self.root, exist_ok=True)
        state = {"model": trainer.model.state_dict(), "epoch": epoch}
        torch.save(state, os.path.join(self.root, f"epoch-{epoch}.pt"))


class Trainer:
    def __init__(self, model, callbacks):
        self.model = model
        self.callbacks = callbacks
        self.rank = dist.get_rank()
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def train_epoch(self, x, y):
        loss = F.mse_loss(self.model(x), y)
        loss.backward()
        for p in self.model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()
        self.opt.step()
        self.opt.zero_grad()
        return loss.item()

    def fit(self, epochs):
        g = torch.Generator().manual_seed(self.rank)
        x, y = torch.randn(16, 4, generator=g), torch.randn(16, 1, generator=g)
        for epoch in range(epochs):
            loss = self.train_epoch(x, y)
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch, loss)


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    callbacks = [LossPrinter()]
    if dist.get_rank() == 0:
        callbacks.append(TorchSaveCheckpoint(CKPT_ROOT))
    Trainer(torch.nn.Linear(4, 1), callbacks).fit(epochs=3)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
