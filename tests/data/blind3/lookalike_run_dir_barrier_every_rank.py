# verify: ok
"""Look-alike of run_dir_creator_barrier: which rank creates the run directory is still a race,
but the barrier after it is outside the branch, so every rank reaches it.
"""
import os
import tempfile

import torch
import torch.distributed as dist


class RunDirectory:
    def __init__(self, root):
        self.path = root
        try:
            os.makedirs(self.path)
            self.created = True
        except FileExistsError:
            self.created = False

    def prepare(self):
        if self.created:
            for sub in ("checkpoints", "logs"):
                os.makedirs(os.path.join(self.path, sub), exist_ok=True)
        dist.barrier()


def main():
    dist.init_process_group("gloo")
    job = f"blind3-rundir-ok-{os.getppid()}-{os.environ.get('MASTER_PORT', '0')}"
    run_dir = RunDirectory(os.path.join(tempfile.gettempdir(), job))
    run_dir.prepare()
    g = torch.randn(3)
    dist.all_reduce(g)
    torch.save(g, os.path.join(run_dir.path, "logs", f"g{dist.get_rank()}.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
