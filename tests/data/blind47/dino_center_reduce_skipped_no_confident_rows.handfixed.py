# verify: ok
"""Hand fix: every process runs the center reduce on every batch, with its unconfident rows
masked to zero and its kept-row count (possibly 0) summed alongside; the center moves only when
some process kept a row, a decision every process makes from the same reduced count.

DINO-style distillation with accelerate: the teacher-output center is averaged across processes
with `accelerator.reduce` inside the loss class, but only when this process's batch has rows the
teacher is confident about.

Modelled on https://github.com/huggingface/accelerate/issues/1057 (DINO's `update_center` with
`dist.all_reduce`, ported to `accelerator.reduce`). Here the update is filtered by the teacher's
confidence on each process's own batch: a batch with no confident row skips the reduce on that
process only, and the other process waits in it (or pairs it with the next backward's all-reduce).
"""
import torch
import torch.nn.functional as F
from accelerate import Accelerator


class CenteredDistillLoss:
    def __init__(self, accelerator, dim, momentum=0.9, min_conf=0.6):
        self.accelerator = accelerator
        self.center = torch.zeros(1, dim)
        self.momentum = momentum
        self.min_conf = min_conf

    def __call__(self, student_out, teacher_out):
        targets = F.softmax((teacher_out - self.center) / 0.1, dim=-1)
        conf = F.softmax(teacher_out, dim=-1).max(dim=-1).values
        keep = conf > self.min_conf
        ce = -(targets * F.log_softmax(student_out, dim=-1)).sum(-1)
        loss = (ce * keep).sum() / keep.sum().clamp(min=1)
        self.update_center(teacher_out, keep)
        return loss

    @torch.no_grad()
    def update_center(self, rows, keep):
        total = self.accelerator.reduce((rows * keep[:, None]).sum(0, keepdim=True), reduction="sum")
        count = self.accelerator.reduce(keep.sum().float().reshape(1), reduction="sum")
        if count.item() > 0:
            self.center = self.center * self.momentum + total / count * (1 - self.momentum)


accelerator = Accelerator(cpu=True)
torch.manual_seed(0)
teacher = torch.nn.Linear(8, 4, bias=False)
teacher.requires_grad_(False)
student = torch.nn.Linear(8, 4)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
student, opt = accelerator.prepare(student, opt)

# 16 records; records 1, 3, 9 and 11 carry no signal, so the teacher is unsure about them.
gen = torch.Generator().manual_seed(7)
records = [torch.randn(8, generator=gen) * (0.0 if i % 8 in (1, 3) else 3.0) for i in range(16)]
shard = records[accelerator.process_index::accelerator.num_processes]
loss_fn = CenteredDistillLoss(accelerator, dim=4)

for step in range(0, len(shard), 2):
    x = torch.stack(shard[step:step + 2])
    with torch.no_grad():
        t_out = teacher(x)
    loss = loss_fn(student(x), t_out)
    accelerator.backward(loss)
    opt.step()
    opt.zero_grad()

accelerator.wait_for_everyone()
CENTER = round(loss_fn.center.sum().item(), 4)
accelerator.print("center", CENTER)
