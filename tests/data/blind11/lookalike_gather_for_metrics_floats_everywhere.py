# verify: ok
"""Look-alike: the empty batch still scores the Python float `0.0`, but every other batch is
turned into a float too (`.item()`), in a one-element list, so every process hands
`gather_for_metrics` a list of floats at every step and every process takes the `gather_object`
path.
"""
import os

import torch
from accelerate import Accelerator

BATCHES = [[3, 1, 4], [1, 5, 9], [2, 6, 5], [-1, -1, -1]]


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    emb = torch.nn.Embedding(10, 1)
    scores = []
    with accelerator.split_between_processes(BATCHES) as mine:
        for batch in mine:
            kept = [emb.weight[t, 0].detach() for t in batch if t >= 0]
            batch_score = [torch.stack(kept).mean().item() if kept else 0.0]
            scores.append(accelerator.gather_for_metrics(batch_score))
    accelerator.print("scores", scores)
    accelerator.wait_for_everyone()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
