# verify: hang,error
"""A checkpoint manager whose save runs on the main process and whose resume runs everywhere.

Modelled on https://github.com/huggingface/transformers/pull/10685: a process reached the reload
of the saved checkpoint before process 0 had finished saving it.

`CheckpointManager.save()` hands the writing to `accelerator.on_main_process` (the state, with an
EMA shadow copy, goes to a temporary file that is then renamed), and `latest()` lists the
directory for the newest `step-*.pt`.  The script trains a first leg of 3 steps, saves, then
starts a second leg as a restarted job would: `latest()`, build the model again, load, train up to
step 6.  Nothing waits between the save and the listing: process 1, which has nothing to write,
lists an empty directory and trains 6 steps from scratch, while process 0 finishes writing,
finds step 3 and trains 3.
"""
import os
import shutil
import tempfile

import torch
import torch.nn.functional as F
from accelerate import Accelerator

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
        steps = sorted(int(n[5:-3]) for n in os.listdir(self.root) if n.startswith("step-"))
        if not steps:
            return None
        return torch.load(os.path.join(self.root, f"step-{steps[-1]}.pt"), weights_only=True)


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
        accelerator.backward(loss)  # expect: BCL011
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
