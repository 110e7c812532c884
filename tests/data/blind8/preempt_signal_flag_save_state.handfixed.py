# verify: ok
"""Hand-fixed twin of preempt_signal_flag_save_state.py.

As Automodel#3007 does, the local flag only raises accelerate's trigger; every process then asks
`accelerator.check_trigger()` (an all-reduce) at each step boundary, so all of them see the
preemption at the same step, save together and leave together.
"""
import os
import shutil
import signal
import tempfile
import threading
import time

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import ProjectConfiguration

STEPS = 12
RUN_DIR = os.path.join(
    tempfile.gettempdir(), f"blind8-preempt-fixed-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
)


class PreemptionGuard:
    def __init__(self, signum=signal.SIGUSR1):
        self.requested = False
        signal.signal(signum, self._on_signal)

    def _on_signal(self, signum, frame):
        self.requested = True


def scheduler_notice_for_reclaimed_node():
    """Stand-in for the cluster: the notice goes to the tasks of the node it reclaims."""
    if int(os.environ["RANK"]) == int(os.environ["WORLD_SIZE"]) - 1:
        threading.Timer(0.35, os.kill, (os.getpid(), signal.SIGUSR1)).start()


def main():
    config = ProjectConfiguration(project_dir=RUN_DIR, automatic_checkpoint_naming=True)
    accelerator = Accelerator(project_config=config)
    if accelerator.is_main_process:
        shutil.rmtree(RUN_DIR, ignore_errors=True)
    accelerator.wait_for_everyone()

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model, optimizer = accelerator.prepare(model, optimizer)
    inputs, targets = torch.randn(STEPS, 8, 4), torch.randn(STEPS, 8, 1)

    guard = PreemptionGuard()
    scheduler_notice_for_reclaimed_node()
    for step in range(STEPS):
        loss = F.mse_loss(model(inputs[step]), targets[step])
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        time.sleep(0.1)  # the rest of a real step
        if guard.requested:
            accelerator.set_trigger()
        if accelerator.check_trigger():
            accelerator.print(f"preempted after step {step}, saving")
            accelerator.save_state()
            break
    accelerator.wait_for_everyone()
    accelerator.print("done")
    accelerator.end_training()


if __name__ == "__main__":
    main()
