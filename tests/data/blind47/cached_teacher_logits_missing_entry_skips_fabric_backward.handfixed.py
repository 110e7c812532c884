# verify: ok
"""Hand fix: a record without cached logits is still trained on, with its hard label (the
teacher's argmax, recomputed) instead of the soft targets, so every process makes one backward per
record of its shard (the shards are the same size).

Offline distillation with Lightning Fabric: a teacher pass caches each record's logits on disk,
keeping only the records the teacher is confident about; the student pass skips a record whose
cached logits are missing.

Modelled on https://github.com/huggingface/trl/issues/2255 (teacher logits stored offline and
loaded during training instead of computed on the fly). Each process caches and reads its own
shard: the confidence filter drops a different number of records on each process, so the
processes make a different number of `fabric.backward` calls (DDP's gradient all-reduce).
"""
import os
import shutil
import tempfile

import torch
import torch.nn.functional as F
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
fabric.launch()
cache = os.path.join(tempfile.gettempdir(), f"blind47-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-logits")
os.makedirs(cache, exist_ok=True)

torch.manual_seed(0)
teacher = torch.nn.Linear(8, 4, bias=False)
gen = torch.Generator().manual_seed(7)
records = [torch.randn(8, generator=gen) * (0.0 if i % 8 in (1, 3) else 3.0) for i in range(16)]
my_ids = list(range(fabric.global_rank, len(records), fabric.world_size))

with torch.no_grad():
    for i in my_ids:
        probs = F.softmax(teacher(records[i]), dim=-1)
        if probs.max() > 0.6:
            torch.save(teacher(records[i]), os.path.join(cache, f"{i}.pt"))


def load_teacher_logits(i):
    path = os.path.join(cache, f"{i}.pt")
    if not os.path.exists(path):
        return None
    return torch.load(path)


student = torch.nn.Linear(8, 4)
student, opt = fabric.setup(student, torch.optim.SGD(student.parameters(), lr=0.1))
for i in my_ids:
    t_logits = load_teacher_logits(i)
    s_logits = student(records[i][None])
    if t_logits is None:
        with torch.no_grad():
            label = teacher(records[i]).argmax()[None]
        loss = F.cross_entropy(s_logits, label)
    else:
        loss = F.kl_div(F.log_softmax(s_logits / 2, -1), F.softmax(t_logits[None] / 2, -1), reduction="batchmean")
    fabric.backward(loss)
    opt.step()
    opt.zero_grad()

fabric.barrier()
shutil.rmtree(cache, ignore_errors=True)
