# verify: ok check=TEACHER_NORM
"""Look-alike: a mean teacher with Lightning Fabric, updated by EMA of the student's parameters on
every process and run in train mode on each process's own batches (with dropout off).

Correct: the teacher normalises with LayerNorm, which keeps no running statistics, so its forward
changes nothing in it; the EMA reads the student's parameters, which DDP keeps equal, so the
teachers agree at the end.
"""
import copy

import torch
import torch.nn.functional as F
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
fabric.launch()
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.LayerNorm(8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
teacher = copy.deepcopy(net).requires_grad_(False)
student, opt = fabric.setup(net, torch.optim.SGD(net.parameters(), lr=0.05))

gen = torch.Generator().manual_seed(100 + fabric.global_rank)
batches = [torch.randn(4, 6, generator=gen) * (1 + i) for i in range(6)]

for x in batches:
    with torch.no_grad():
        targets = F.softmax(teacher(x) / 2.0, dim=-1)
    loss = F.kl_div(F.log_softmax(student(x) / 2.0, dim=-1), targets, reduction="batchmean")
    fabric.backward(loss)
    opt.step()
    opt.zero_grad()
    with torch.no_grad():
        for pt, ps in zip(teacher.parameters(), student.module.parameters()):
            pt.mul_(0.9).add_(ps, alpha=0.1)

TEACHER_NORM = round(sum((p ** 2).sum().item() for p in teacher.parameters()), 4)
fabric.print("teacher squared norm", TEACHER_NORM)
fabric.barrier()
