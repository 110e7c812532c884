# verify: ok
"""Look-alike of stage_exit_barrier_only_without_error: the same Stage, on a manifest all processes share.

`Stage.__exit__` waits for everyone only when its block raised nothing, and the loop catches
`ValueError` and goes on. But each block parses a manifest entry that every process reads in full
(not a per-process shard), so a malformed entry raises on every process and all of them skip the
barrier together.
"""
import json

import torch
from accelerate import Accelerator

MANIFEST = ['{"files": 3}', '{"files": 4', '{"files": 2}']


class Stage:
    def __init__(self, accelerator, name):
        self.accelerator, self.name = accelerator, name

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.accelerator.wait_for_everyone()
        return False


def main():
    accelerator = Accelerator(cpu=True)
    files = torch.zeros(1)
    for i, entry in enumerate(MANIFEST):
        try:
            with Stage(accelerator, f"entry {i}"):
                n = json.loads(entry)["files"]
        except ValueError as err:
            accelerator.print(f"skipping manifest entry {i}: {err}")
            continue
        files += n * (accelerator.process_index + 1)
    files = accelerator.reduce(files)
    accelerator.print(f"weighted file count {files.item():.0f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
