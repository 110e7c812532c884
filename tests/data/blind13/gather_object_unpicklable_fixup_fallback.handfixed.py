# verify: ok
"""Hand-fixed: the repair is applied where the record is scored and only plain data (id, score,
repaired text) goes into the results, so every process's list pickles and every process gathers.
"""
import os

os.environ.setdefault("ACCELERATE_USE_CPU", "true")

import torch
from accelerate import Accelerator
from accelerate.utils import gather_object

RECORDS = [
    {"id": 0, "text": "good product"},
    {"id": 1, "text": "arrived broken"},
    {"id": 2, "text": "works as described"},
    {"id": 3, "text": "  refund please\x00"},
    {"id": 4, "text": "five stars"},
    {"id": 5, "text": "meh"},
]


def score(record):
    result = {"id": record["id"], "score": float(len(record["text"].split()))}
    if "\x00" in record["text"]:
        result["text"] = record["text"].replace("\x00", "").strip()
    return result


def main():
    accelerator = Accelerator()
    mine = RECORDS[accelerator.process_index::accelerator.num_processes]
    results = [score(r) for r in mine]
    try:
        everyone = gather_object(results)
    except Exception as exc:
        accelerator.print(f"gather failed ({type(exc).__name__}), keeping local results")
        everyone = results
    total = torch.tensor([sum(r["score"] for r in results)])
    total = accelerator.reduce(total, reduction="sum")
    accelerator.print(f"{len(everyone)} results, total score {total.item():.0f}")
    accelerator.wait_for_everyone()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
