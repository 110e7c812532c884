# verify: hang
"""Checkpoint-on-preemption: a signal handler sets a flag that each process tests on its own.

Modelled on NVIDIA-NeMo/Automodel#3007 ("When any rank receives the configured signal, the
signal handler records it locally. The flags are then gathered across ranks at the next step
boundary ... it is sufficient for the signal to reach a single rank — for example, only the
workers on one node") and kyutai-labs/pocket-tts#277 ("a rank exiting alone would deadlock the
others in the next collective").

    https://github.com/NVIDIA-NeMo/Automodel/pull/3007
    https://github.com/kyutai-labs/pocket-tts/pull/277

`PreemptionGuard` installs a SIGUSR1 handler that sets `requested`; after each optimizer step
the loop tests it and, if set, calls `accelerator.save_state()` (automatic checkpoint naming:
it waits for everyone) and leaves. The scheduler's notice reaches only the node being
reclaimed, here the last process, some 0.35 s into training: that process saves and stops
while process 0 goes on into the next step's backward (DDP's gradient all-reduce).
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
    tempfile.gettempdir(), f"blind8-preempt-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
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
            print(f"[process {accelerator.process_index}] preempted after step {step}, saving")
            accelerator.save_state()  # expect: BCL011
            break
    accelerator.wait_for_everyone()
    accelerator.print("done")
    accelerator.end_training()


if __name__ == "__main__":
    main()
