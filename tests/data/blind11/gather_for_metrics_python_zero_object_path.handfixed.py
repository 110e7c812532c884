# verify: ok
"""Hand fix: the empty batch scores `torch.tensor(0.0)`, a tensor like every other batch, so every
process takes the tensor gather.

Broken version: `gather_for_metrics` handed a tensor on one process and a Python float on the other.

Shape of huggingface/accelerate#2710 (https://github.com/huggingface/accelerate/pull/2710) and
huggingface/transformers#30357 (https://github.com/huggingface/transformers/issues/30357):
`gather_for_metrics` checks the runtime type of its input and, for anything that is not all
tensors, takes the `gather_object` path (a pickled all-gather) instead of the tensor gather. A
batch whose tokens are all unknown (-1) scores `0.0`, a float; it is rank 1's second batch, so at
that step the processes enter different collectives.
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
            batch_score = torch.stack(kept).mean() if kept else torch.tensor(0.0)
            scores.append(accelerator.gather_for_metrics(batch_score))
    accelerator.print("scores", scores)
    accelerator.wait_for_everyone()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
