# verify: divergent check=TEACHER_BN
"""Mean-teacher distillation with DDP: the student is wrapped in DDP, the momentum teacher is a
plain copy updated by EMA of the student's parameters on every process, and left in train mode.

Modelled on https://github.com/facebookresearch/unbiased-teacher/issues/31 (only the student is
wrapped in DDP; each process updates its own teacher, with no reduce or broadcast). The EMA of
the parameters agrees, because DDP averages the student's gradients; but the teacher's forward in
train mode updates its BatchNorm running statistics from each process's own batches, so the
teachers' buffers (and the pseudo-targets they give in eval) differ between processes.
"""
import copy

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
teacher = copy.deepcopy(net)
teacher.requires_grad_(False)
student = DDP(net)
opt = torch.optim.SGD(student.parameters(), lr=0.05)

gen = torch.Generator().manual_seed(100 + dist.get_rank())
batches = [torch.randn(4, 6, generator=gen) * (1 + i) for i in range(6)]


@torch.no_grad()
def ema_update(teacher, student, m=0.9):
    for pt, ps in zip(teacher.parameters(), student.module.parameters()):
        pt.mul_(m).add_(ps.detach(), alpha=1 - m)


for x in batches:
    with torch.no_grad():
        targets = F.softmax(teacher(x) / 2.0, dim=-1)  # expect: BCL002
    loss = F.kl_div(F.log_softmax(student(x) / 2.0, dim=-1), targets, reduction="batchmean")
    loss.backward()
    opt.step()
    opt.zero_grad()
    ema_update(teacher, student)

TEACHER_BN = round(teacher[1].running_mean.sum().item(), 4)
print("teacher running_mean sum", TEACHER_BN)
dist.barrier()
dist.destroy_process_group()
