# verify: ok
"""Every process calls `save_state()` (accelerate writes the files on the main process itself);
only the message is on the main process."""
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
        if (epoch + 1) % self.every == 0:
            self.accelerator.save_state()
            if self.accelerator.is_main_process:
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
