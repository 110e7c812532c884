# verify: hang
"""Calibrated predictions written line by line as JSON, gathered per batch, inside one try block.

Modelled on https://github.com/huggingface/transformers/pull/10632 (metrics computed with numpy
were `np.float32` scalars rather than Python floats, and the Trainer's JSON writing failed on
them).

`calibrate` returns a Python float from `np.interp`, but a score past the table's last edge gets
the table's last entry as it is: an `np.float32`, which `json.dumps` rejects. The `except
TypeError` around the whole loop keeps the run going without the file. The prepared loader deals
batch 3 (rows 6 and 7) to process 1, and row 7 scores past the table: process 1 leaves the loop
there, before that batch's `gather_for_metrics`, while process 0 gathers its second batch.
"""
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader

EDGES = np.array([0.0, 0.5, 1.0, 1.5], dtype=np.float32)
TABLE = np.array([0.05, 0.40, 0.80, 0.97], dtype=np.float32)
# (id, logit pair) rows; the model's score is the mean of the pair.
ROWS = [(i, pair) for i, pair in enumerate([
    [0.2, 0.4], [0.9, 0.7], [1.1, 1.3], [0.1, 0.0],
    [0.6, 0.8], [1.2, 1.0], [0.3, 0.5], [1.9, 1.7],
])]


def calibrate(score):
    if score >= EDGES[-1]:
        return TABLE[-1]
    return float(np.interp(score, EDGES, TABLE))


def collate(rows):
    return torch.tensor([i for i, _ in rows]), torch.tensor([pair for _, pair in rows])


def main():
    accelerator = Accelerator()
    out_dir = Path(tempfile.gettempdir()) / f"blind14-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
    out_dir.mkdir(parents=True, exist_ok=True)
    loader = accelerator.prepare(DataLoader(ROWS, batch_size=2, collate_fn=collate))
    scores = []
    with open(out_dir / f"predictions-{accelerator.process_index}.jsonl", "w") as out:
        try:
            for ids, pairs in loader:
                batch_scores = pairs.mean(dim=1)
                for row_id, score in zip(ids.tolist(), batch_scores.tolist()):
                    out.write(json.dumps({"id": row_id, "prob": calibrate(score)}) + "\n")
                scores.append(accelerator.gather_for_metrics(batch_scores))  # expect: BCL005
        except TypeError as err:
            print(f"process {accelerator.process_index}: predictions not written ({err})")
    total = accelerator.reduce(torch.tensor([float(len(scores))]), reduction="sum")
    accelerator.print(f"{int(total.item())} gathered batches")
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
