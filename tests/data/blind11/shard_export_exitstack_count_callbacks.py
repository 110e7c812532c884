# verify: hang
"""Exit callbacks that all-reduce, registered once per non-empty shard in an `ExitStack`.

Shape of yugabyte/yb-voyager#669 (https://github.com/yugabyte/yb-voyager/pull/669), an export
that hangs because an empty partition produces no file and no completion signal, with the
completion signal here being a collective: each non-empty shard a process exports registers
`stack.callback(confirm, ...)`, which all-reduces the rows written; the callbacks run when the
`with` block ends. Shards are dealt `SHARDS[rank::world]`; rank 1's second shard is empty, so it
runs one callback (one all-reduce) fewer than rank 0.
"""
import contextlib
import json
import os
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist

SHARDS = [
    [{"id": 0, "text": "a"}, {"id": 1, "text": "b"}],
    [{"id": 2, "text": "c"}],
    [{"id": 3, "text": "d"}, {"id": 4, "text": "e"}],
    [],
]


def out_dir():
    name = f"blind11-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-export"
    path = Path(tempfile.gettempdir()) / name
    path.mkdir(exist_ok=True)
    return path


def confirm(shard_id, n_rows):
    total = torch.tensor([n_rows])
    dist.all_reduce(total)  # expect: BCL005
    print(f"shard {shard_id}: {n_rows} rows here, {int(total)} in this round", flush=True)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    target = out_dir()
    with contextlib.ExitStack() as stack:
        for shard_id in range(rank, len(SHARDS), world):
            rows = SHARDS[shard_id]
            if not rows:
                continue
            fh = stack.enter_context(open(target / f"shard{shard_id}.jsonl", "w"))
            for row in rows:
                fh.write(json.dumps(row) + "\n")
            stack.callback(confirm, shard_id, len(rows))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__" and os.environ.get("RANK") is not None:
    main()
