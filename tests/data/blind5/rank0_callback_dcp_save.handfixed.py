# verify: ok
"""Hand-fixed twin of rank0_callback_dcp_save.py.

Every rank holds the checkpoint callback (`dcp.save` is a collective and decides itself which
rank writes what); only the loss printer stays on rank 0.
"""
import os
import tempfile

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn.functional as F

RUN_TAG = f"{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"  # same on every rank
CKPT_ROOT = os.path.join(tempfile.gettempdir(), f"dcp-{RUN_TAG}")


class LossPrinter:
    def on_epoch_end(self, trainer, epoch, loss):
        print(f"rank {trainer.rank} epoch {epoch}: loss {loss:.4f}")


class DCPCheckpoint:
    def __init__(self, root):
        self.root = root

    def on_epoch_end(self, trainer, epoch, loss):
        state = {"model": trainer.model.state_dict(), "epoch": torch.tensor(epoch)}
        dcp.save(state, checkpoint_id=os.path.join(self.root, f"epoch-{epoch}"))


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
    callbacks = [DCPCheckpoint(CKPT_ROOT)]
    if dist.get_rank() == 0:
        callbacks.append(LossPrinter())
    Trainer(torch.nn.Linear(4, 1), callbacks).fit(epochs=3)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
