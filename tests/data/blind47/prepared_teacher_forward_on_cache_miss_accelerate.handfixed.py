# verify: ok
"""Hand fix: the teacher is frozen and kept out of `accelerator.prepare` (no DDP wrapper, no
buffer broadcast), so a cache miss runs a local forward only.

Distillation with accelerate where the teacher is passed to `accelerator.prepare` (so it is
wrapped in DDP: its parameters were never frozen) and run only for the records missing from an
in-memory cache of teacher logits.

Modelled on https://github.com/huggingface/accelerate/issues/1056 (student and teacher both given
to `accelerator.prepare`, the teacher used only for inference). A DDP forward broadcasts the
module's buffers (the teacher's BatchNorm statistics) from process 0: the teacher forward is a
collective. Each process's cache misses depend on its own records (repeated records hit), so the
processes run a different number of teacher forwards.
"""
import torch
import torch.nn.functional as F
from accelerate import Accelerator

accelerator = Accelerator(cpu=True)
torch.manual_seed(0)
teacher = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 4))
student = torch.nn.Linear(8, 4)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
teacher.requires_grad_(False).eval()
student, opt = accelerator.prepare(student, opt)

gen = torch.Generator().manual_seed(3)
pool = torch.randn(12, 8, generator=gen)
# Process 0 sees six distinct records; process 1 sees three records twice each.
ids = list(range(6)) if accelerator.process_index == 0 else [6, 7, 8, 6, 7, 8]
cache = {}


def teacher_logits(i):
    if i not in cache:
        cache[i] = teacher(pool[i:i + 1])[0].detach()
    return cache[i]


for i in ids:
    t = teacher_logits(i)
    s = student(pool[i:i + 1])[0]
    loss = F.kl_div(F.log_softmax(s / 2, -1), F.softmax(t / 2, -1), reduction="sum")
    accelerator.backward(loss)
    opt.step()
    opt.zero_grad()

accelerator.wait_for_everyone()
