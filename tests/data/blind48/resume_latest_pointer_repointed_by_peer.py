# verify: hang,error
"""`resume: latest` resolved by each process, and each process repoints `latest` to the new run.

Modelled on https://github.com/stanford-crfm/helm/pull/1528: parallel invocations raced on the
`runs/latest` symlink that each run updates when it starts. Here `resolve_resume` reads `latest`
and points it at the new run under a file lock, on every process: the first process resumes the
previous run's checkpoint (step 4), the second finds `latest` already pointing at the new, empty
run and starts from step 0, so it runs 6 steps against 2 and waits in DDP's all-reduce alone.
"""
import fcntl
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

ROOT = os.path.join(tempfile.gettempdir(), f"blind48-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-runs")
CONFIG = {"run_name": "run-new", "resume": "latest", "total_steps": 6}


def write_previous_run():
    os.makedirs(os.path.join(ROOT, "run-prev"), exist_ok=True)
    tmp = os.path.join(ROOT, f"tmp-{os.getpid()}")
    torch.save({"step": 4, "model": torch.nn.Linear(4, 1).state_dict()}, tmp)
    os.replace(tmp, os.path.join(ROOT, "run-prev", "ckpt.pt"))
    os.symlink("run-prev", tmp)
    os.replace(tmp, os.path.join(ROOT, "latest"))


def resolve_resume(run_name):
    with open(os.path.join(ROOT, "latest.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        previous = os.readlink(os.path.join(ROOT, "latest"))
        tmp = os.path.join(ROOT, f"tmp-{os.getpid()}")
        os.symlink(run_name, tmp)
        os.replace(tmp, os.path.join(ROOT, "latest"))
    ckpt = os.path.join(ROOT, previous, "ckpt.pt")
    return torch.load(ckpt) if os.path.exists(ckpt) else None


dist.init_process_group("gloo")
write_previous_run()
dist.barrier()
state = resolve_resume(CONFIG["run_name"])
torch.manual_seed(0)
net = torch.nn.Linear(4, 1)
start = 0
if state is not None:
    net.load_state_dict(state["model"])
    start = state["step"]
model = DDP(net)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(start, CONFIG["total_steps"]):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()  # expect: BCL011
    opt.step()
dist.barrier()
shutil.rmtree(ROOT, ignore_errors=True)
print("resumed at", start)
dist.destroy_process_group()
