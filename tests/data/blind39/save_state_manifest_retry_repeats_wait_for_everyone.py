# verify: hang,error
"""Retry a whole checkpoint (save_state, barrier, loader manifest) when any part raises OSError.

Modelled on https://github.com/rwth-i6/returnn/issues/1829 (a single failed checkpoint write
crashed a multi-day job; the request is to retry the save). Here the retry wraps everything the
checkpoint does, including `accelerator.wait_for_everyone()`. The previous job was preempted
while process 1 wrote its loader manifest and left that manifest's lock file behind: process 1's
first manifest write fails (the stale lock is cleared for the next try), so process 1 runs
`save_state` and the barrier a second time while process 0 has gone back to training, where the
DDP backward's all-reduce meets process 1's second barrier.
"""
import json
import os
import shutil
import tempfile
import time

import torch
from accelerate import Accelerator

STEPS = 6


def run_dir():
    addr, port = os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]
    return os.path.join(tempfile.gettempdir(), f"blind39-{addr}-{port}-acc")


def write_manifest(out_dir, index, position):
    path = os.path.join(out_dir, f"loader-{index}.json")
    lock = path + ".lock"
    if os.path.exists(lock):
        os.remove(lock)  # stale: the writer that held it is gone
        raise OSError(f"{path} is locked by another writer")
    with open(path, "w") as f:
        json.dump({"position": position}, f)


def save_checkpoint(accelerator, out_dir, position, attempts=3):
    for attempt in range(attempts):
        try:
            accelerator.save_state(out_dir)
            accelerator.wait_for_everyone()  # expect: BCL005
            write_manifest(out_dir, accelerator.process_index, position)
            return
        except OSError as err:
            print(f"process {accelerator.process_index}: checkpoint attempt {attempt} failed: {err}")
            time.sleep(0.1 * 2**attempt)
    raise RuntimeError("checkpoint failed")


def main():
    accelerator = Accelerator(cpu=True)
    out_dir = os.path.join(run_dir(), "ckpt")
    os.makedirs(out_dir, exist_ok=True)
    open(os.path.join(out_dir, "loader-1.json.lock"), "a").close()  # left by the preempted job

    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model, opt = accelerator.prepare(model, opt)
    gen = torch.Generator().manual_seed(accelerator.process_index)
    for step in range(STEPS):
        x, y = torch.randn(4, 8, generator=gen), torch.randn(4, 1, generator=gen)
        opt.zero_grad()
        accelerator.backward(torch.nn.functional.mse_loss(model(x), y))
        opt.step()
        if step == 2:
            save_checkpoint(accelerator, out_dir, position=step + 1)

    accelerator.wait_for_everyone()
    shutil.rmtree(run_dir(), ignore_errors=True)
    accelerator.end_training()


if __name__ == "__main__":
    main()
