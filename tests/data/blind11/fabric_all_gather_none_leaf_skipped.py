# verify: hang
"""`fabric.all_gather` of a dict whose optional entry is None on some batches.

Shape of Lightning-AI/pytorch-lightning#7695
(https://github.com/Lightning-AI/pytorch-lightning/issues/7695): "`all_gather` passes silently
when non-compatible type is passed into it"; Fabric's `all_gather` walks a collection and
gathers only its tensors, so a `None` entry is one collective fewer on that process. The
reference score is None for a batch without references, which is rank 1's second batch.
"""
import os

import lightning as L
import torch

BATCHES = [
    {"x": [[0.1, 0.2], [0.3, 0.1]], "ref": [1.0, 0.0]},
    {"x": [[0.5, 0.5], [0.2, 0.9]], "ref": [0.0, 1.0]},
    {"x": [[0.4, 0.1], [0.8, 0.3]], "ref": [1.0, 1.0]},
    {"x": [[0.6, 0.2], [0.1, 0.1]], "ref": None},
]


def main():
    fabric = L.Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    torch.manual_seed(0)
    model = fabric.setup(torch.nn.Linear(2, 1))
    results = []
    for batch in BATCHES[fabric.global_rank::fabric.world_size]:
        with torch.no_grad():
            pred = model(torch.tensor(batch["x"])).squeeze(-1)
        out = {"mean_pred": pred.mean()}
        out["ref_error"] = None if batch["ref"] is None else (pred - torch.tensor(batch["ref"])).abs().mean()
        results.append(fabric.all_gather(out))  # expect: BCL005
    fabric.print(results)
    fabric.barrier()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
