# verify: error
"""`gather_object` of per-record results that one process cannot pickle, with a local fallback.

Modelled on NVIDIA/TensorRT-LLM#7507 (https://github.com/NVIDIA/TensorRT-LLM/pull/7507), where a
rank whose object failed to serialize left the gather before the others ("Keep collectives
aligned: every rank must call Allgather exactly once"). Each process scores its share of the
records; a record whose text needed repair keeps the repair function (a lambda) beside its
score. `accelerate.utils.gather_object` pickles the list before any communication, so on the
process holding such a record it raises at once; the program falls back to its local results and
goes on to the next collective, while the other process is still inside the gather.
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
        result["repair"] = lambda text: text.replace("\x00", "").strip()
    return result


def main():
    accelerator = Accelerator()
    mine = RECORDS[accelerator.process_index::accelerator.num_processes]
    results = [score(r) for r in mine]
    try:
        everyone = gather_object(results)  # expect: BCL005
    except Exception as exc:
        accelerator.print(f"gather failed ({type(exc).__name__}), keeping local results")
        everyone = results
    total = torch.tensor([sum(r["score"] for r in results)])
    total = accelerator.reduce(total, reduction="sum")
    accelerator.print(f"{len(everyone)} results, total score {total.item():.0f}")
    accelerator.wait_for_everyone()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
