# verify: error
"""Batches drawn by a function decorated to run on the main process, which also broadcasts them.

Modelled on huggingface/accelerate#1821 (https://github.com/huggingface/accelerate/issues/1821),
"broadcast() and broadcast_object_list() do not broadcast objects": for distributed inference
over a large image set, the reporter draws each batch on the main process inside a function
decorated with `@dist_state.on_main_process` and calls `broadcast_object_list(batch)` in it, so
that the batch "makes it to the other processes", then splits it with
`split_between_processes`.

The decorator makes the function a no-op returning `None` on every other process, so the
broadcast inside it is made by the main process only.

Where the ranks part ways: `draw_batch` runs its body on process 0 only. Process 0 waits in
`broadcast_object_list(picked)`; process 1 gets `None` back and fails unpacking it into
`batch, remaining`, which closes its connection under process 0's broadcast.
"""
import random

import torch
from accelerate import PartialState
from accelerate.utils import broadcast_object_list, reduce

BATCH = 4
# (image file, label) pairs of the evaluation set
SAMPLES = [(f"img_{i:03d}.png", i % 3) for i in range(16)]

state = PartialState(cpu=True)


@state.on_main_process
def draw_batch(remaining):
    picked = random.sample(remaining, BATCH)
    remaining = [i for i in remaining if i not in picked]
    picked = broadcast_object_list(picked)  # expect: BCL005
    remaining = broadcast_object_list(remaining)
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
