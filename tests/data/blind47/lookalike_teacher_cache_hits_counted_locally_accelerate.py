# verify: ok
"""Look-alike: distillation with accelerate and an in-memory cache of teacher logits whose hits
differ between processes (process 1 sees its records twice); the hit rate is printed per process
and the epoch's loss statistics are reduced once at the end.

Correct: the teacher is frozen and kept out of `accelerator.prepare` (a cache miss runs a local
forward, no collective), every record is trained on, and the only reduce runs on every process
once, on a tensor of the same shape everywhere.
"""
import torch
import torch.nn.functional as F
from accelerate import Accelerator

accelerator = Accelerator(cpu=True)
torch.manual_seed(0)
teacher = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 4))
teacher.requires_grad_(False).eval()
student = torch.nn.Linear(8, 4)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
student, opt = accelerator.prepare(student, opt)

gen = torch.Generator().manual_seed(3)
pool = torch.randn(12, 8, generator=gen)
ids = list(range(6)) if accelerator.process_index == 0 else [6, 7, 8, 6, 7, 8]
cache, hits = {}, 0
stats = torch.zeros(2)

for i in ids:
    if i in cache:
        hits += 1
    else:
        with torch.no_grad():
            cache[i] = teacher(pool[i:i + 1])[0]
    s = student(pool[i:i + 1])[0]
    loss = F.kl_div(F.log_softmax(s / 2, -1), F.softmax(cache[i] / 2, -1), reduction="sum")
    accelerator.backward(loss)
    opt.step()
    opt.zero_grad()
    stats += torch.tensor([loss.item(), 1.0])

print(f"process {accelerator.process_index}: teacher cache hit rate {hits / len(ids):.2f}")
stats = accelerator.reduce(stats, reduction="sum")
accelerator.print("mean distillation loss", round((stats[0] / stats[1]).item(), 4))
