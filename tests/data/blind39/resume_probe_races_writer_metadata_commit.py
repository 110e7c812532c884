# verify: hang,error
"""Restart in process from the newest durable checkpoint, probed right after the writer's save.

Modelled on https://github.com/KempnerInstitute/KempnerForge/issues/177 (auto-resume must check
that a `step_N` checkpoint is durable, its metadata written, before resuming into it). Here the
durability check is in place, but `save` returns at once on the processes that do not write, so
after a failure at step 4 the in-process restart probes the directory while process 0 is still
writing step 4. Process 1 sees step 4 without its metadata and resumes at step 2; process 0
resumes at step 4. The resumed loops run 4 and 2 DDP steps: process 1 waits in a gradient
all-reduce that process 0 never joins.
"""
import json
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

TOTAL_STEPS = 6
FAIL_AT = 4


def run_dir():
    addr, port = os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]
    return os.path.join(tempfile.gettempdir(), f"blind39-{addr}-{port}-resume")


def save(root, step, model, opt):
    if dist.get_rank() == 0:
        step_dir = os.path.join(root, f"step_{step}")
        os.makedirs(step_dir, exist_ok=True)
        torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, os.path.join(step_dir, "state.pt"))
        with open(os.path.join(step_dir, ".metadata"), "w") as f:
            json.dump({"step": step}, f)


def resolve_resume_path(root):
    durable = [
        int(name.split("_")[1])
        for name in os.listdir(root)
        if os.path.exists(os.path.join(root, name, ".metadata"))
    ]
    return max(durable, default=0)


def train(model, opt, start, stop):
    gen = torch.Generator().manual_seed(start)
    for step in range(start, stop):
        x = torch.randn(16, 512, generator=gen)
        opt.zero_grad()
        model(x).pow(2).mean().backward()  # expect: BCL011
        opt.step()
        if step + 1 in (2, 4):
            save(run_dir(), step + 1, model.module, opt)


def main():
    dist.init_process_group("gloo")
    root = run_dir()
    os.makedirs(root, exist_ok=True)
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(512, 512))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    train(model, opt, 0, FAIL_AT)  # the node error strikes once step 4 is saved

    start = resolve_resume_path(root)
    print(f"rank {dist.get_rank()}: restarting from step {start}")
    if start:
        state = torch.load(os.path.join(root, f"step_{start}", "state.pt"))
        model.module.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
    train(model, opt, start, TOTAL_STEPS)

    dist.barrier()
    shutil.rmtree(root, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
