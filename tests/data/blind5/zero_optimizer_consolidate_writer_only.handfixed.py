# verify: ok
"""Hand-fixed twin of zero_optimizer_consolidate_writer_only.py.

Every rank consolidates the optimizer state to rank 0 when a save is due; only then does the
writer test decide who writes the file.
"""
import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP

RUN_TAG = f"{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"  # same on every rank
SAVE_DIR = os.path.join(tempfile.gettempdir(), f"zero-{RUN_TAG}")


class Checkpointer:
    def __init__(self, model, optimizer, every):
        self.model, self.optimizer, self.every = model, optimizer, every
        self.is_writer = dist.get_rank() == 0

    def maybe_save(self, step):
        if step % self.every:
            return
        self.optimizer.consolidate_state_dict(to=0)
        if not self.is_writer:
            return
        os.makedirs(SAVE_DIR, exist_ok=True)
        state = {"model": self.model.module.state_dict(), "optim": self.optimizer.state_dict()}
        torch.save({**state, "step": step}, os.path.join(SAVE_DIR, f"step-{step}.pt"))


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    model = DDP(net)
    optimizer = ZeroRedundancyOptimizer(model.parameters(), torch.optim.Adam, lr=1e-3)
    checkpointer = Checkpointer(model, optimizer, every=2)
    g = torch.Generator().manual_seed(rank)
    for step in range(1, 6):
        x, y = torch.randn(4, 8, generator=g), torch.randn(4, 2, generator=g)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        checkpointer.maybe_save(step)
    total = loss.detach().reshape(1)
    dist.all_reduce(total)
    print(f"rank {rank}: final mean loss {total.item() / dist.get_world_size():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
