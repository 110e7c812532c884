# verify: hang
"""Modelled on https://github.com/SeisSol/SeisSol/pull/1107: a barrier sits inside the branch
that creates the output directory, so a rank that finds the directory already there (another rank
created it first) skips the barrier and the ranks' collectives fall out of step.
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
            dist.barrier()  # expect: BCL005


def job_dir():
    job = f"blind3-rundir-{os.getppid()}-{os.environ.get('MASTER_PORT', '0')}"
    return os.path.join(tempfile.gettempdir(), job)


def train(steps=4):
    w = torch.ones(3)
    for _ in range(steps):
        g = torch.randn(3)
        dist.all_reduce(g)
        w -= 0.1 * g / dist.get_world_size()
    return w


def main():
    dist.init_process_group("gloo")
    run_dir = RunDirectory(job_dir())
    run_dir.prepare()
    weights = train()
    torch.save(weights, os.path.join(run_dir.path, f"w{dist.get_rank()}.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
