# verify: ok
"""Correct: only the main process writes the report. The others meet it at a barrier and return
early; the main process writes, then reaches its own barrier, which pairs with theirs. Every
process runs exactly one barrier."""
import os
import tempfile

import torch
from accelerate import Accelerator


def write_report(accelerator, scores, path):
    if not accelerator.is_main_process:
        accelerator.wait_for_everyone()
        return
    with open(path, "w") as report:
        report.write(f"mean score {scores.mean().item():.3f}\n")
    accelerator.wait_for_everyone()


def main():
    accelerator = Accelerator()
    scores = accelerator.gather(torch.tensor([0.5 + accelerator.process_index]))
    write_report(accelerator, scores, os.path.join(tempfile.mkdtemp(), "report.txt"))
    accelerator.print(f"gathered {scores.tolist()}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
