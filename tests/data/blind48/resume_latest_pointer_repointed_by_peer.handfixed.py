# verify: ok
"""Hand fix of resume_latest_pointer_repointed_by_peer: every process reads `latest` first, all
wait at a barrier, and only then does every process point it at the new run, so every process
resumes the same checkpoint.
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
    previous = os.readlink(os.path.join(ROOT, "latest"))
    dist.barrier()
    with open(os.path.join(ROOT, "latest.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
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
    loss.backward()
    opt.step()
dist.barrier()
shutil.rmtree(ROOT, ignore_errors=True)
print("resumed at", start)
dist.destroy_process_group()
