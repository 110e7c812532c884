# verify: hang
"""A checkpoint callback registered on rank 0 only, whose hook calls `dcp.save`.

Modelled on https://github.com/deepspeedai/DeepSpeed/pull/801 (`save_checkpoint` called on rank 0
only hangs: every rank must call it) and
https://github.com/Lightning-AI/pytorch-lightning/issues/19780 (`if fabric.global_rank == 0:
fabric.save(...)`, where the strategy decides who writes).

The trainer fires `on_epoch_end` on every callback it holds. The list is built per rank, the
usual "only rank 0 touches the disk": `DCPCheckpoint` is added where `rank == 0`. Its hook calls
`dcp.save`, which plans the save collectively (gathers every rank's local plan, scatters the
global one, and agrees on the result), so rank 0 waits there for a rank that never comes.
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
        dcp.save(state, checkpoint_id=os.path.join(self.root, f"epoch-{epoch}"))  # expect: BCL011


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
        callbacks.append(DCPCheckpoint(CKPT_ROOT))
    Trainer(torch.nn.Linear(4, 1), callbacks).fit(epochs=3)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
