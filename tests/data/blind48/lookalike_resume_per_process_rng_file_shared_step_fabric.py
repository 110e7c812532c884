# verify: ok
"""Look-alike: on resume each process loads a file of its own (`rng-<rank>.pt`, a per-process RNG
state that really differs between processes), but the step it resumes from comes from the one
checkpoint named in the config, the same path on every process; every process runs the same
number of steps.
"""
import os
import shutil
import tempfile

import torch
from lightning.fabric import Fabric

ROOT = os.path.join(tempfile.gettempdir(), f"blind48-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-resume")
CONFIG = {"resume_from": os.path.join(ROOT, "ckpt-step4.pt"), "total_steps": 6}


def write_previous_run(rank):
    os.makedirs(ROOT, exist_ok=True)
    tmp = os.path.join(ROOT, f"tmp-{os.getpid()}")
    torch.save({"step": 4}, tmp)
    os.replace(tmp, CONFIG["resume_from"])
    torch.save(torch.Generator().manual_seed(100 + rank).get_state(), os.path.join(ROOT, f"rng-{rank}.pt"))


fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
fabric.launch()
write_previous_run(fabric.global_rank)
fabric.barrier()
start = torch.load(CONFIG["resume_from"])["step"] if os.path.exists(CONFIG["resume_from"]) else 0
gen = torch.Generator()
gen.set_state(torch.load(os.path.join(ROOT, f"rng-{fabric.global_rank}.pt")))
torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
model, opt = fabric.setup(model, opt)
for step in range(start, CONFIG["total_steps"]):
    loss = model(torch.randn(8, 4, generator=gen)).pow(2).mean()
    opt.zero_grad()
    fabric.backward(loss)
    opt.step()
fabric.barrier()
shutil.rmtree(ROOT, ignore_errors=True)
print("resumed at", start)
