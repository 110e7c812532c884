# verify: ok
"""Hand-fixed: every process calls `cleanup_scratch` at the end, whatever its share held; the wait
inside it is reached by all of them, and an empty scratch directory is removed as well.
"""
import gzip
import json
import os
import tempfile
from pathlib import Path

os.environ.setdefault("ACCELERATE_USE_CPU", "true")

import torch
from accelerate import Accelerator

from mod_scratch import cleanup_scratch, stage

INPUTS = {
    "part-0.jsonl.gz": [1.0, 2.0, 3.0],
    "part-1.jsonl": [4.0, 5.0],
    "part-2.jsonl": [6.0],
    "part-3.jsonl": [7.0, 8.0],
}


def job_dir(name):
    tag = f"{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
    path = Path(tempfile.gettempdir()) / f"blind13-{tag}-{name}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_inputs(accelerator, root, names):
    for name in names:
        text = "\n".join(json.dumps({"value": v}) for v in INPUTS[name]).encode()
        (root / name).write_bytes(gzip.compress(text) if name.endswith(".gz") else text)


def main():
    accelerator = Accelerator()
    names = sorted(INPUTS)[accelerator.process_index::accelerator.num_processes]
    inputs = job_dir("inputs")
    write_inputs(accelerator, inputs, names)
    scratch = job_dir(f"scratch-{accelerator.process_index}")
    staged, unpacked = stage([inputs / n for n in names], scratch)
    values = [json.loads(line)["value"] for path in staged for line in path.read_text().splitlines()]
    total = accelerator.reduce(torch.tensor([sum(values), float(len(values))]), reduction="sum")
    accelerator.print(f"mean value {total[0].item() / total[1].item():.2f}")
    cleanup_scratch(accelerator, scratch)


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
