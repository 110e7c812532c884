# verify: ok
"""Look-alike: feature and logit distillation with DDP where each process picks its distillation
temperature and weight from its own batch (the teacher's mean confidence), so the weight is 0 on
a batch the teacher is unsure about.

Correct: the distillation term is always part of the loss (multiplied by its weight), so the
projector is in every process's graph and every backward readies the same DDP bucket; the
weights differ between processes, but DDP averages the gradients and the parameters stay equal.
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
        self.proj = torch.nn.Linear(6, 4)

    def forward(self, x):
        h = torch.relu(self.body(x))
        return self.head(h), self.proj(h)


dist.init_process_group("gloo")
torch.manual_seed(0)
teacher = torch.nn.Linear(8, 4, bias=False)
student = DDP(Student())
opt = torch.optim.SGD(student.parameters(), lr=0.1)
gen = torch.Generator().manual_seed(7)
records = [torch.randn(8, generator=gen) * (0.0 if i % 8 in (1, 3) else 3.0) for i in range(16)]
shard = records[dist.get_rank()::dist.get_world_size()]

for step in range(4):
    x = torch.stack(shard[2 * step:2 * step + 2])
    with torch.no_grad():
        t_logits = teacher(x)
    conf = F.softmax(t_logits, dim=-1).max(dim=-1).values.mean().item()
    temperature = 4.0 if conf > 0.5 else 1.0
    alpha = 0.7 if conf > 0.5 else 0.0
    logits, feat = student(x)
    kd = F.kl_div(F.log_softmax(logits / temperature, -1), F.softmax(t_logits / temperature, -1),
                  reduction="batchmean") * temperature ** 2
    loss = F.cross_entropy(logits, t_logits.argmax(-1)) + alpha * (kd + F.mse_loss(feat, t_logits))
    loss.backward()
    opt.step()
    opt.zero_grad()

dist.barrier()
dist.destroy_process_group()
