# verify: ok
"""Hand fix of main_only_batch_sampler_broadcast_objects: draw on the main process, share on all.

Modelled on huggingface/accelerate#1821 (https://github.com/huggingface/accelerate/issues/1821).
`draw_batch` is no longer decorated: only the drawing is under `if state.is_main_process:`, and
every process calls `broadcast_object_list` with a list of the same length (`[None, None]` off
the main process), which the main process's batch and remaining indices overwrite.
"""
import random

import torch
from accelerate import PartialState
from accelerate.utils import broadcast_object_list, reduce

BATCH = 4
# (image file, label) pairs of the evaluation set
SAMPLES = [(f"img_{i:03d}.png", i % 3) for i in range(16)]

state = PartialState(cpu=True)


def draw_batch(remaining):
    if state.is_main_process:
        picked = random.sample(remaining, BATCH)
        payload = [picked, [i for i in remaining if i not in picked]]
    else:
        payload = [None, None]
    picked, remaining = broadcast_object_list(payload)
    return picked, remaining


def classify(path):
    """Stands in for the image model: a deterministic guess from the file name."""
    return int(path[4:7]) % 3 if int(path[4:7]) % 5 else 0


def main():
    random.seed(0)
    remaining = list(range(len(SAMPLES)))
    correct = 0
    seen = 0
    while remaining:
        batch, remaining = draw_batch(remaining)
        with state.split_between_processes(batch) as mine:
            for idx in mine:
                path, label = SAMPLES[idx]
                correct += int(classify(path) == label)
                seen += 1
    totals = reduce(torch.tensor([correct, seen]), reduction="sum")
    if state.is_main_process:
        print(f"accuracy {int(totals[0])}/{int(totals[1])}")
    state.wait_for_everyone()


if __name__ == "__main__":
    main()
