# verify: hang
"""A checkpoint manager returns early on every process but the main one before calling
`accelerator.save_state()`. With `ProjectConfiguration(automatic_checkpoint_naming=True)`
`save_state` runs `wait_for_everyone()` inside, so the main process waits there for processes that
never come, while they wait at the barrier after the epoch.

Modelled on huggingface/accelerate#1171 "should accelerator.save_state be under
accelerator.is_main_process" (https://github.com/huggingface/accelerate/issues/1171) and
huggingface/diffusers#2606 (https://github.com/huggingface/diffusers/issues/2606): `save_state`
under `is_main_process` hung.
"""
import os
import shutil
import tempfile

import torch
from accelerate import Accelerator
from accelerate.utils import ProjectConfiguration


class CheckpointManager:
    def __init__(self, accelerator, every):
        self.accelerator = accelerator
        self.every = every

    def maybe_save(self, epoch):
        if not self.accelerator.is_main_process:
            return
        if (epoch + 1) % self.every == 0:
            self.accelerator.save_state()  # expect: BCL011
            print(f"saved after epoch {epoch}")


def main():
    project_dir = os.path.join(tempfile.gettempdir(), f"blind-ckpt-{os.environ.get('MASTER_PORT', 'x')}")
    if os.environ.get("RANK", "0") == "0":
        shutil.rmtree(project_dir, ignore_errors=True)  # a previous run's checkpoints
    config = ProjectConfiguration(project_dir=project_dir, automatic_checkpoint_naming=True, total_limit=2)
    accelerator = Accelerator(project_config=config)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = accelerator.prepare(model, opt)
    manager = CheckpointManager(accelerator, every=1)
    for epoch in range(2):
        opt.zero_grad()
        accelerator.backward(model(torch.randn(4, 4)).pow(2).mean())
        opt.step()
        manager.maybe_save(epoch)
        accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
