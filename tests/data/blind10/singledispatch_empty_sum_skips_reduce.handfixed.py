# verify: ok
"""An eval loop whose per-batch loss is `sum(...)` of the scored rows, averaged by a singledispatch helper.

Modelled on pytorch/FBGEMM#3586 (https://github.com/pytorch/FBGEMM/pull/3586) ("Return if no data to
allreduce") and helmholtz-analytics/heat#369 (https://github.com/helmholtz-analytics/heat/issues/369)
(a reduction that behaves differently where the local data are empty). `mean_across` in
`mod_reduce.py` is a `functools.singledispatch` function: tensors go through `accelerator.reduce`,
plain numbers are returned as they are. `sum([])` is the int 0, so for a batch without a scored row
(rank 1's second batch) the call dispatches to the number version and skips the reduce.

Hand-fixed: `sum(losses, torch.tensor(0.0))` starts from a tensor, so an unscored batch is still a
tensor and goes through `accelerator.reduce` on every process.
"""
import torch
from accelerate import Accelerator

from mod_reduce import mean_across

# (score, target) rows dealt ROWS[rank::world], batches of 2; target None: not scored
ROWS = [
    (0.9, 1.0), (0.2, 0.0), (0.4, 0.0), (0.8, 1.0),
    (0.7, 1.0), (0.6, None), (0.3, 0.0), (0.5, None),
    (0.1, 0.0), (0.9, 1.0), (0.2, 0.0), (0.6, 1.0),
]


def main():
    accelerator = Accelerator(cpu=True)
    mine = ROWS[accelerator.process_index::accelerator.num_processes]
    history = []
    for start in range(0, len(mine), 2):
        batch = mine[start:start + 2]
        losses = [torch.tensor((s - t) ** 2) for s, t in batch if t is not None]
        batch_loss = sum(losses, torch.tensor(0.0))  # a tensor even when empty
        history.append(float(mean_across(batch_loss, accelerator)))
    accelerator.wait_for_everyone()
    accelerator.print("per-batch mean loss", [round(v, 3) for v in history])
    accelerator.end_training()


if __name__ == "__main__":
    main()
