# verify: error,hang
"""Feature distillation with DDP: the distillation term (the student's projector against the
teacher's features) is weighted by a schedule that switches it off for a batch the teacher is
unsure about, and the term is then left out of the loss.

Modelled on https://github.com/joanaapa/Distillation-DNABERT-Promoter/issues/1 (student parameters
used only by the distillation objective get no gradient, and DDP fails with "parameters that were
not used in producing loss"). Here the weight is decided by each process's own batch: the process
whose teacher was unsure leaves its projector out of the graph, its DDP bucket never becomes ready,
and it raises at the next forward while the other process waits in the all-reduce.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


class Student(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(8, 6)
        self.head = torch.nn.Linear(6, 4)
        self.proj = torch.nn.Linear(6, 5)

    def forward(self, x):
        h = torch.relu(self.body(x))
        return self.head(h), self.proj(h)


def kd_weight(step, teacher_conf):
    base = 0.5 * min(1.0, (step + 1) / 2)
    return base if teacher_conf > 0.5 else 0.0


dist.init_process_group("gloo")
torch.manual_seed(0)
teacher = torch.nn.Linear(8, 5, bias=False)
student = DDP(Student())
opt = torch.optim.SGD(student.parameters(), lr=0.1)
gen = torch.Generator().manual_seed(7)
records = [torch.randn(8, generator=gen) * (0.0 if i % 8 in (1, 3) else 3.0) for i in range(16)]
shard = records[dist.get_rank()::dist.get_world_size()]
labels = torch.arange(16) % 4

for step in range(4):
    x = torch.stack(shard[2 * step:2 * step + 2])
    y = labels[2 * step:2 * step + 2]
    with torch.no_grad():
        t_feat = teacher(x)
    conf = F.softmax(t_feat, dim=-1).max(dim=-1).values.mean().item()
    alpha = kd_weight(step, conf)
    logits, s_feat = student(x)
    loss = F.cross_entropy(logits, y)
    if alpha > 0:
        loss = loss + alpha * F.mse_loss(s_feat, t_feat)
    loss.backward()  # expect: BCL011
    opt.step()
    opt.zero_grad()

dist.barrier()
dist.destroy_process_group()
