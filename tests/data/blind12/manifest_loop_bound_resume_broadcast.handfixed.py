# verify: ok
"""Hand-fixed: `resume` is bound on every process before the loop (a zero placeholder of the
source's shape and dtype), and the broadcast fills it from the main process.

Modelled on https://github.com/Red-Hat-AI-Innovation-Team/mini_trainer/pull/38 (a name defined
inside the `local_rank == 0` block and used by every rank: UnboundLocalError on the others). The
main process reads the export manifest and keeps the last complete shard's step and row count in
`resume`; the other processes iterate an empty list, so `resume` is never bound there and
`broadcast(resume)` fails on process 1 while process 0 waits in the broadcast.
"""
import json
import os
import tempfile

import torch
from accelerate import Accelerator
from accelerate.utils import broadcast

RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind12-manifest-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}",
)
MANIFEST = os.path.join(RUN_DIR, "manifest.jsonl")


def write_manifest():
    os.makedirs(RUN_DIR, exist_ok=True)
    with open(MANIFEST, "w") as f:
        for step, rows, complete in [(100, 640, True), (200, 640, True), (300, 210, False)]:
            f.write(json.dumps({"step": step, "rows": rows, "complete": complete}) + "\n")


def main():
    accelerator = Accelerator()
    if accelerator.is_main_process:
        write_manifest()
    records = []
    if accelerator.is_main_process:
        with open(MANIFEST) as f:
            records = [json.loads(line) for line in f]
    resume = torch.zeros(2, dtype=torch.long)  # bound on every process, the source's shape and dtype
    for record in records:
        if record["complete"]:
            resume = torch.tensor([record["step"], record["rows"]])
    resume = broadcast(resume)
    step, rows = resume.tolist()
    accelerator.print(f"resuming after step {step} ({rows} rows exported)")
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
