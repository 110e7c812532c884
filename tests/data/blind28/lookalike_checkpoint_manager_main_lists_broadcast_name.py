# verify: ok
"""Look-alike: a main-only checkpoint write, resumed from a name the main process broadcasts.

As in `checkpoint_manager_resume_races_main_save`, `save()` writes on the main process only and
nothing waits after it.  But `latest()` lists the directory on the main process alone (after its
own write has returned) and sends the name to the others with `broadcast_object_list`; the
others block in that broadcast until the file exists, and every process resumes at step 3.
"""
import os
import shutil
import tempfile

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import broadcast_object_list

TOTAL_STEPS = 6


class CheckpointManager:
    def __init__(self, accelerator, root):
        self.accelerator = accelerator
        self.root = root

    def save(self, step, model, opt):
        self.accelerator.on_main_process(self._write)(step, model, opt)

    def _write(self, step, model, opt):
        state = {
            "step": step,
            "model": self.accelerator.unwrap_model(model).state_dict(),
            "opt": opt.state_dict(),
            "ema": torch.randn(12_000_000),
        }
        tmp = os.path.join(self.root, f".step-{step}.tmp")
        torch.save(state, tmp)
        os.replace(tmp, os.path.join(self.root, f"step-{step}.pt"))

    def latest(self):
        found = [None]
        if self.accelerator.is_main_process:
            names = sorted(n for n in os.listdir(self.root) if n.startswith("step-"))
            found = [names[-1] if names else None]
        broadcast_object_list(found)
        if found[0] is None:
            return None
        return torch.load(os.path.join(self.root, found[0]), weights_only=True)


def build(accelerator):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    return accelerator.prepare(model, opt)


def train(accelerator, model, opt, first, last):
    g = torch.Generator().manual_seed(accelerator.process_index)
    for step in range(first, last):
        x = torch.randn(8, 4, generator=g)
        loss = F.mse_loss(model(x), x.sum(dim=1, keepdim=True))
        opt.zero_grad()
        accelerator.backward(loss)
        opt.step()


def main():
    accelerator = Accelerator(cpu=True)
    addr, port = os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]
    root = os.path.join(tempfile.gettempdir(), f"blind28-{addr}-{port}-ckpt")
    os.makedirs(root, exist_ok=True)
    manager = CheckpointManager(accelerator, root)

    model, opt = build(accelerator)
    train(accelerator, model, opt, 0, 3)
    manager.save(3, model, opt)

    state = manager.latest()  # the restarted job
    model, opt = build(accelerator)
    start = 0
    if state is not None:
        accelerator.unwrap_model(model).load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        start = state["step"]
    print(f"process {accelerator.process_index}: resuming at step {start}")
    train(accelerator, model, opt, start, TOTAL_STEPS)
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        shutil.rmtree(root, ignore_errors=True)
    accelerator.end_training()


if __name__ == "__main__":
    main()
