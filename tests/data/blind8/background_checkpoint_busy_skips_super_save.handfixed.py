# verify: ok
"""Hand-fixed twin of background_checkpoint_busy_skips_super_save.py.

The override asks every rank whether a previous upload is still running (all-reduce MAX of the
local "busy" flag) before deciding: when rank 0's upload is busy, every rank skips the save;
otherwise every rank calls `super().save()` and meets the barrier.
"""
import json
import os
import tempfile
import threading
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

STEPS, SAVE_EVERY = 8, 2
CKPT_DIR = os.path.join(
    tempfile.gettempdir(), f"blind8-ckpt-fixed-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
)


class Checkpointer:
    def __init__(self, directory):
        self.directory = directory
        os.makedirs(directory, exist_ok=True)

    def _write(self, step, state):
        torch.save(state, os.path.join(self.directory, f"step{step}.pt"))
        with open(os.path.join(self.directory, "latest.json"), "w") as f:
            json.dump({"step": step}, f)

    def save(self, step, state):
        if dist.get_rank() == 0:
            self._write(step, state)
        dist.barrier()  # nobody reads latest.json before rank 0 has written it


class BackgroundCheckpointer(Checkpointer):
    def __init__(self, directory, upload_seconds):
        super().__init__(directory)
        self.upload_seconds, self._writer = upload_seconds, None

    def _upload(self, step, state):
        super()._write(step, state)
        time.sleep(self.upload_seconds)  # copy to object storage

    def _write(self, step, state):
        snapshot = {k: v.clone() for k, v in state.items()}
        self._writer = threading.Thread(target=self._upload, args=(step, snapshot))
        self._writer.start()

    def save(self, step, state):
        busy = torch.tensor([1 if self._writer is not None and self._writer.is_alive() else 0])
        dist.all_reduce(busy, op=dist.ReduceOp.MAX)
        if busy.item():
            print(f"[rank {dist.get_rank()}] step {step}: previous checkpoint still uploading, skipped")
            return
        super().save(step, state)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    checkpointer = BackgroundCheckpointer(CKPT_DIR, upload_seconds=0.6)
    for step in range(1, STEPS + 1):
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= dist.get_world_size()
        optimizer.step()
        time.sleep(0.1)  # the rest of a real step
        if step % SAVE_EVERY == 0:
            checkpointer.save(step, model.state_dict())
    if checkpointer._writer is not None:
        checkpointer._writer.join()
    dist.barrier()
    print(f"[rank {rank}] done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
