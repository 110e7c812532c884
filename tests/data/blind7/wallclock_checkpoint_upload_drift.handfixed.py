# verify: ok
"""Hand fix of wallclock_checkpoint_upload_drift: the processes agree on the "due" flag.

Each process's "due" flag is summed over the processes (`accelerator.reduce`), and a save is due
when any clock says so; `save_state()` then runs on the same step everywhere whatever each
process's own clock says.

Original docstring: checkpoints every N seconds of each process's own wall clock, reset after an
upload.

Modelled on ComputationalRadiationPhysics/picongpu#4042
(https://github.com/ComputationalRadiationPhysics/picongpu/pull/4042): "the elapsed time per node
can differ if the checkpointing is directly within the simulation loop based on elapsed time
being triggered it could be that each instance/process is within a different time step. This
would result in a deadlock", and idaholab/moose#26588
(https://github.com/idaholab/moose/pull/26588):
"If we hit this at different times on different processors, we could take different branches".

`TimedCheckpointer.maybe_save()` calls `accelerator.save_state()` (automatic checkpoint naming:
it starts with `wait_for_everyone()`) once `every_s` seconds have passed since its last save.
The first save falls on the same step everywhere (DDP keeps the steps in lock-step), but then
the main process copies the checkpoint to the "bucket" before it resets its clock, so process
1's clock starts 0.25 s earlier and its next save comes steps before the main process's.
"""
import os
import shutil
import tempfile
import time

import torch
from accelerate import Accelerator
from accelerate.utils import ProjectConfiguration

RUN = os.path.join(tempfile.gettempdir(), f"blind7-wallclock-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}")


class TimedCheckpointer:
    def __init__(self, accelerator, every_s):
        self.accelerator = accelerator
        self.every_s = every_s
        self.last = time.monotonic()

    def upload(self):
        ckpts = os.path.join(RUN, "checkpoints")
        latest = max(os.listdir(ckpts), key=lambda d: int(d.rsplit("_", 1)[1]))
        shutil.copytree(os.path.join(ckpts, latest), os.path.join(RUN, "bucket", latest))
        time.sleep(0.25)  # the network copy

    def maybe_save(self):
        due = torch.tensor([float(time.monotonic() - self.last >= self.every_s)])
        if not self.accelerator.reduce(due, reduction="sum").item():
            return False
        self.accelerator.save_state()
        if self.accelerator.is_main_process:
            self.upload()
        self.last = time.monotonic()
        return True


def main():
    config = ProjectConfiguration(project_dir=RUN, automatic_checkpoint_naming=True, total_limit=3)
    accelerator = Accelerator(cpu=True, project_config=config)
    if accelerator.is_main_process:
        shutil.rmtree(RUN, ignore_errors=True)
    accelerator.wait_for_everyone()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model, optimizer = accelerator.prepare(model, optimizer)
    checkpointer = TimedCheckpointer(accelerator, every_s=0.45)
    saves = 0
    for step in range(14):
        time.sleep(0.1)  # fetching the batch
        x = torch.randn(8, 4)
        loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        saves += checkpointer.maybe_save()
    total = accelerator.reduce(torch.tensor([float(saves)]), reduction="sum")
    accelerator.print(f"saves across processes: {total.item():.0f}")
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        shutil.rmtree(RUN, ignore_errors=True)
    accelerator.end_training()


if __name__ == "__main__":
    main()
