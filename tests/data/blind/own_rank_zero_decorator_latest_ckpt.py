# verify: hang
"""Old checkpoints are pruned by a method wrapped in the program's own `leader_only` decorator
(it runs the function on global rank 0 and returns None elsewhere). The method asks the checkpoint
store for the latest step, and `latest_step()` agrees on it with a `broadcast_object_list`, a
collective the other process never joins.

Modelled on meta-pytorch/tnt#936 "extract get_latest_checkpoint_path to a single rank function"
(https://github.com/meta-pytorch/tnt/pull/936): `get_latest_checkpoint_path` broadcasts the path
from rank 0, and when called from logic done on rank 0 only, the broadcast hangs.
"""
import functools
import os
import tempfile

import torch
import torch.distributed as dist


def leader_only(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if dist.get_rank() == 0:
            return fn(*args, **kwargs)
        return None

    return wrapper


class CheckpointStore:
    def __init__(self, root):
        self.root = root
        os.makedirs(root, exist_ok=True)

    def steps(self):
        return sorted(int(f.split("-")[1].split(".")[0]) for f in os.listdir(self.root) if f.startswith("step-"))

    def latest_step(self):
        found = [max(self.steps(), default=None) if dist.get_rank() == 0 else None]
        dist.broadcast_object_list(found, src=0)
        return found[0]

    def save(self, step, state):
        if dist.get_rank() == 0:
            torch.save(state, os.path.join(self.root, f"step-{step}.pt"))
        dist.barrier()

    @leader_only
    def prune(self, keep):
        latest = self.latest_step()  # expect: BCL005
        for step in self.steps():
            if step <= latest - keep:
                os.remove(os.path.join(self.root, f"step-{step}.pt"))


def main():
    dist.init_process_group("gloo")
    store = CheckpointStore(os.path.join(tempfile.gettempdir(), f"blind-store-{os.environ.get('MASTER_PORT', 'x')}"))
    model = torch.nn.Linear(2, 2)
    for step in range(3):
        store.save(step, model.state_dict())
        store.prune(keep=2)
    print(f"rank {dist.get_rank()}: resume from {store.latest_step()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
