# verify: hang
"""Generated-kernel cache whose hit or miss each rank decides by looking at the disk itself.

Modelled on unslothai/unsloth-zoo#967 (https://github.com/unslothai/unsloth-zoo/pull/967):
"`distributed_function()` runs `write_file()` on rank 0 *before* it blocks in the broadcast, so
on a cold cache any rank arriving after that write sees an up-to-date file and skips the
collective", and on underworld3#612 (https://github.com/underworldcode/underworld3/pull/612):
"Disk lookup is cheap and rank-local", with the collective inside the miss branch.

`load_kernel()` returns the cached source when the file exists; on a miss rank 0 renders the
kernel, writes it and sends it with `broadcast_object_list`. Rank 1 first parses a larger shard
than rank 0, so it reaches the lookup after rank 0 has written the file: it takes the hit path
and never joins rank 0's broadcast.
"""
import os
import shutil
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist

CACHE = Path(tempfile.gettempdir()) / f"blind7-kcache-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
SHARD_ROWS = [150, 900]  # rows of each rank's shard


def parse_shard(n_rows):
    time.sleep(0.001 * n_rows)  # stands in for decoding the rows
    return torch.arange(n_rows, dtype=torch.float32).reshape(-1, 3)


def render_kernel(name, width):
    time.sleep(0.2)  # code generation is slow
    return f"def {name}(x):\n    return x.reshape(-1, {width}).sum(1)\n"


def load_kernel(name, width):
    path = CACHE / f"{name}_{width}.py"
    if path.exists():
        return path.read_text()
    holder = [None]
    if dist.get_rank() == 0:
        holder[0] = render_kernel(name, width)
        CACHE.mkdir(parents=True, exist_ok=True)
        path.write_text(holder[0])
    dist.broadcast_object_list(holder, src=0)  # expect: BCL005
    return holder[0]


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if rank == 0:
        shutil.rmtree(CACHE, ignore_errors=True)  # a fresh cache for this job
    dist.barrier()
    rows = parse_shard(SHARD_ROWS[rank])
    scope = {}
    exec(load_kernel("row_sum", 3), scope)
    total = scope["row_sum"](rows).sum().reshape(1)
    dist.all_reduce(total)
    print(f"rank {rank}: total {total.item():.0f}")
    dist.barrier()
    if rank == 0:
        shutil.rmtree(CACHE, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
