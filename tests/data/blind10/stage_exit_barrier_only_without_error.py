# verify: hang
"""A stage context manager that waits for everyone on exit only when its body raised nothing.

Modelled on NVIDIA/Model-Optimizer#2159 (https://github.com/NVIDIA/Model-Optimizer/pull/2159), whose
`cleanup()` gates its barrier on `sys.exc_info()[0] is None`, and ai2cm/ace#1067
(https://github.com/ai2cm/ace/pull/1067), whose `Distributed.context()` skips shutdown (and its
barrier) on an exception. `Stage.__exit__` calls `accelerator.wait_for_everyone()` only when the
block ended normally, so that a crashing process does not block. The export loop, though, catches
the `ValueError` of a malformed record and goes on to the next shard, where the others still wait.
Rank 1's second shard holds the malformed record.
"""
import json

import torch
from accelerate import Accelerator

# shards dealt SHARDS[rank::world]; shard 3 has a record that is not valid JSON
SHARDS = [
    ['{"v": 1}', '{"v": 2}'], ['{"v": 3}'], ['{"v": 4}', '{"v": 5}'],
    ['{"v": 6}', '{"v": 7'], ['{"v": 8}'], ['{"v": 9}', '{"v": 10}'],
]


class Stage:
    def __init__(self, accelerator, name):
        self.accelerator, self.name = accelerator, name

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.accelerator.wait_for_everyone()  # expect: BCL005
        return False


def main():
    accelerator = Accelerator(cpu=True)
    mine = SHARDS[accelerator.process_index::accelerator.num_processes]
    total = torch.zeros(1)
    for i, shard in enumerate(mine):
        try:
            with Stage(accelerator, f"shard {i}"):
                values = [json.loads(line)["v"] for line in shard]
        except ValueError as err:
            print(f"process {accelerator.process_index}: skipping shard {i}: {err}")
            continue
        total += sum(values)
    total = accelerator.reduce(total)
    accelerator.print(f"sum of exported values {total.item():.0f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
