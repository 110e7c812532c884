# verify: ok
"""Every process asks for the latest step (the broadcast); only the file removal is done by the
`leader_only` helper."""
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

    def prune(self, keep):
        self._remove_up_to(self.latest_step() - keep)

    @leader_only
    def _remove_up_to(self, last):
        for step in self.steps():
            if step <= last:
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
