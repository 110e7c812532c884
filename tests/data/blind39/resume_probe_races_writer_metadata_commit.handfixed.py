# verify: ok
"""Hand fix: `save` ends with a barrier, so no process probes the directory before the commit.

Modelled on https://github.com/KempnerInstitute/KempnerForge/issues/177 (auto-resume must check
that a `step_N` checkpoint is durable, its metadata written, before resuming into it). Process 0
writes the state and then the metadata; every process leaves `save` through a barrier, so the
in-process restart after the failure at step 4 finds step 4 durable everywhere and both processes
resume there.
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
    dist.barrier()


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
        model(x).pow(2).mean().backward()
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
