# verify: ok nproc=1 nnodes=2
"""Hand fix: each node's local main process fetches the teacher, so every node has the file.

Modelled on https://github.com/huggingface/accelerate/issues/2488: a second model is prepared
separately, `if some_condition: model2 = accelerator.prepare(model2)`, which the maintainers
call fine as long as the condition holds alike everywhere. Here the condition is whether the
teacher's weights are on this node's local disk, and only the global main process fetched them,
so only node 0 wraps the teacher in DDP (whose constructor runs collectives).
"""
import os
import tempfile

import torch
from accelerate import Accelerator


def node_dir():
    base = f"blind20-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
    path = os.path.join(tempfile.gettempdir(), base, f"node{os.environ.get('GROUP_RANK', '0')}")
    os.makedirs(path, exist_ok=True)
    return path


def tiny_net():
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))


def fetch_teacher(path):
    torch.manual_seed(7)
    torch.save(tiny_net().state_dict(), path)  # stands in for a download to local scratch


def main():
    accelerator = Accelerator(cpu=True)
    teacher_path = os.path.join(node_dir(), "teacher.pt")
    if accelerator.is_local_main_process:  # one copy per node's local disk
        fetch_teacher(teacher_path)
    accelerator.wait_for_everyone()

    torch.manual_seed(0)
    student = tiny_net()
    opt = torch.optim.SGD(student.parameters(), lr=0.05)
    student, opt = accelerator.prepare(student, opt)
    teacher = None
    if os.path.exists(teacher_path):
        teacher = tiny_net()
        teacher.load_state_dict(torch.load(teacher_path))
        teacher = accelerator.prepare(teacher)

    torch.manual_seed(accelerator.process_index)
    for step in range(3):
        x = torch.randn(8, 4)
        target = teacher(x).detach() if teacher is not None else x.sum(dim=1, keepdim=True)
        loss = torch.nn.functional.mse_loss(student(x), target)
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
    accelerator.print(f"done, last loss {loss.item():.4f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
