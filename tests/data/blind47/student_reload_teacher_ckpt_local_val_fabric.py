# verify: divergent check=STUDENT_NORM
"""Teacher/student checkpoint swap with Lightning Fabric: after each round, every process
evaluates the student against the saved teacher checkpoint on its own validation shard, and
reloads the teacher's weights into the student when the teacher scores better there.

Modelled on https://github.com/pytorch/elastic/pull/19 (whether to load a checkpoint was decided
by each trainer on its own, and the fix agrees on it with a collective to avoid state
de-synchronisation). Here the decision comes from each process's validation shard: one process
reloads and the other keeps training from its own weights; DDP averages gradients but never
re-broadcasts parameters, so the students stay different.
"""
import copy

import torch
import torch.nn.functional as F
from lightning.fabric import Fabric

fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
fabric.launch()
torch.manual_seed(0)
net = torch.nn.Linear(6, 3)
teacher_state = copy.deepcopy(net.state_dict())
student, opt = fabric.setup(net, torch.optim.SGD(net.parameters(), lr=0.5))

gen = torch.Generator().manual_seed(11)
x_all = torch.randn(32, 6, generator=gen)
y_all = (x_all[:, 0] > 0).long() + (x_all[:, 1] > 1).long()
train_x, train_y = x_all[:16], y_all[:16]
val_x = x_all[16 + fabric.global_rank::2]
# The second validation shard was labelled by another annotator, with the classes in reverse order.
val_y = (2 - y_all[16 + fabric.global_rank::2]) if fabric.global_rank else y_all[16 + fabric.global_rank::2]


def val_loss(state):
    probe = torch.nn.Linear(6, 3)
    probe.load_state_dict(state)
    with torch.no_grad():
        return F.cross_entropy(probe(val_x), val_y).item()


for rnd in range(3):
    for i in range(fabric.global_rank, 16, 2):
        loss = F.cross_entropy(student(train_x[i:i + 1]), train_y[i:i + 1])
        fabric.backward(loss)
        opt.step()
        opt.zero_grad()
    mine = {k: v.detach().clone() for k, v in student.module.state_dict().items()}
    if val_loss(teacher_state) < val_loss(mine):  # expect: BCL002
        student.module.load_state_dict(teacher_state)
    else:
        teacher_state = mine

STUDENT_NORM = round(sum((p ** 2).sum().item() for p in student.parameters()), 4)
fabric.print("student squared norm", STUDENT_NORM)
fabric.barrier()
