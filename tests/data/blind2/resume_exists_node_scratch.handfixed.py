# verify: ok
"""Resume from a checkpoint that each worker looks for on its own scratch disk.

Modelled on https://github.com/KempnerInstitute/KempnerForge/issues/49 (fixed in
https://github.com/KempnerInstitute/KempnerForge/pull/50): `CheckpointManager.load()` calls
`train_state_path.exists()` on every rank; where the answers disagree some ranks return early and
the others block in the `broadcast_object_list` that follows.
"""
import os
import shutil
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist


class CheckpointManager:
    def __init__(self, root: Path):
        self.root = root

    @property
    def train_state_path(self) -> Path:
        return self.root / "train_state.pt"

    def save(self, state: dict) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        torch.save(state, self.train_state_path)

    def load(self):
        # rank 0's answer decides for everyone (the fix of KempnerForge#50)
        found = [self.train_state_path.exists() if dist.get_rank() == 0 else None]
        dist.broadcast_object_list(found, src=0)
        if not found[0]:
            return None
        holder = [torch.load(self.train_state_path) if dist.get_rank() == 0 else None]
        dist.broadcast_object_list(holder, src=0)
        return holder[0]


def scratch_dir() -> Path:
    # each worker's node-local scratch, as a scheduler hands it out
    return Path(tempfile.gettempdir()) / f"bl2_scratch_{os.environ['RANK']}_{os.environ['MASTER_PORT']}"


def main():
    dist.init_process_group("gloo")
    manager = CheckpointManager(scratch_dir() / "ckpt")
    if dist.get_rank() == 0:
        # the previous run's rank 0 left its checkpoint on its own node
        manager.save({"step": 40, "lr": 3e-4})
    dist.barrier()
    state = manager.load()
    start = state["step"] if state else 0
    total = torch.tensor([float(start)])
    dist.all_reduce(total)
    print(f"rank {dist.get_rank()} resumes at {start}, sum {total.item()}", flush=True)
    dist.barrier()
    shutil.rmtree(scratch_dir(), ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
