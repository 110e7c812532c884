# verify: hang
"""A checkpoint policy that answers True on the main process only; the saver waits for everyone.

Modelled on https://github.com/bytedance/UNO/issues/71: `if accelerator.sync_gradients and
accelerator.is_main_process and global_step % args.checkpointing_steps == 0:` [...]
`accelerator.wait_for_everyone()   # this step get stucked`. Here the test lives in a policy
method and the wait inside `save_checkpoint()` of another module.
"""
import shutil
import tempfile

import torch
from accelerate import Accelerator

from mod_ckpt import save_checkpoint


class CheckpointPolicy:
    def __init__(self, accelerator, every: int):
        self.accelerator = accelerator
        self.every = every

    def due(self, step: int) -> bool:
        return self.accelerator.is_main_process and step % self.every == 0


def main():
    accelerator = Accelerator()
    out_dir = tempfile.mkdtemp(prefix="bl2_ckpt_")
    model = accelerator.prepare(torch.nn.Linear(4, 1))
    policy = CheckpointPolicy(accelerator, every=2)
    for step in range(1, 4):
        with torch.no_grad():
            model(torch.randn(2, 4))
        if policy.due(step):
            save_checkpoint(accelerator, model, out_dir, step)  # expect: BCL005
    accelerator.wait_for_everyone()
    shutil.rmtree(out_dir, ignore_errors=True)
    accelerator.print("done")


if __name__ == "__main__":
    main()
