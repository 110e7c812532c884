# verify: hang
"""An asynchronous checkpointer that skips a save while its previous write is still running.

Modelled on KempnerInstitute/KempnerForge#50 ("End `save()` with a `dist.barrier()` so
non-rank-0 cannot return before rank 0 commits ... save() is a collective") and
ByteDance-Seed/VeOmni#1181 (review: state of a pending async save seen by one rank only, "peer
ranks can block in that barrier").

    https://github.com/KempnerInstitute/KempnerForge/pull/50
    https://github.com/ByteDance-Seed/VeOmni/pull/1181

`Checkpointer.save()` lets rank 0 write and ends with a barrier. `BackgroundCheckpointer`
inherits it, moves rank 0's write to a thread (a 0.6 s upload), and overrides `save()` to return
early while that thread is alive, calling `super().save()` otherwise. Only rank 0 ever has a
writer thread: at step 4 rank 0's step-2 upload is still running, so it skips the save while
rank 1 enters the barrier, and rank 0 goes on to step 5's gradient all-reduce.
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
    tempfile.gettempdir(), f"blind8-ckpt-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
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
        if self._writer is not None and self._writer.is_alive():
            print(f"[rank {dist.get_rank()}] step {step}: previous checkpoint still uploading, skipped")
            return
        super().save(step, state)  # expect: BCL005


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
