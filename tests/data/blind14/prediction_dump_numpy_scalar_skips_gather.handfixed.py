# verify: ok
"""Hand-fixed: `calibrate` returns a Python float on every path, so no process leaves the loop.

The broken program is `prediction_dump_numpy_scalar_skips_gather.py` (modelled on https://github.com/huggingface/transformers/pull/10632).
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
        return float(TABLE[-1])
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
                scores.append(accelerator.gather_for_metrics(batch_scores))
        except TypeError as err:
            print(f"process {accelerator.process_index}: predictions not written ({err})")
    total = accelerator.reduce(torch.tensor([float(len(scores))]), reduction="sum")
    accelerator.print(f"{int(total.item())} gathered batches")
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
