# verify: ok
"""Look-alike of kernel_cache_race_broadcast_object: each rank still looks at the disk itself.

Every rank checks the cache file before anyone may write it: the lookup is followed by a barrier
and only then does rank 0 render and write the kernel, so all ranks saw the same directory and
take the same branch (the broadcast in the miss branch is reached by every rank or by none).
Rank 1 still parses a larger shard and arrives later.
"""
import os
import shutil
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist

CACHE = Path(tempfile.gettempdir()) / f"blind7-kcache-look-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
SHARD_ROWS = [150, 900]


def parse_shard(n_rows):
    time.sleep(0.001 * n_rows)
    return torch.arange(n_rows, dtype=torch.float32).reshape(-1, 3)


def render_kernel(name, width):
    time.sleep(0.2)
    return f"def {name}(x):\n    return x.reshape(-1, {width}).sum(1)\n"


def load_kernel(name, width):
    path = CACHE / f"{name}_{width}.py"
    cached = path.exists()
    dist.barrier()  # nobody writes before every rank has looked
    if cached:
        return path.read_text()
    holder = [None]
    if dist.get_rank() == 0:
        holder[0] = render_kernel(name, width)
        CACHE.mkdir(parents=True, exist_ok=True)
        path.write_text(holder[0])
    dist.broadcast_object_list(holder, src=0)
    return holder[0]


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if rank == 0:
        shutil.rmtree(CACHE, ignore_errors=True)
    dist.barrier()
    rows = parse_shard(SHARD_ROWS[rank])
    scope = {}
    exec(load_kernel("row_sum", 3), scope)
    exec(load_kernel("row_sum", 3), scope)  # second call: a hit on every rank
    total = scope["row_sum"](rows).sum().reshape(1)
    dist.all_reduce(total)
    print(f"rank {rank}: total {total.item():.0f}")
    dist.barrier()
    if rank == 0:
        shutil.rmtree(CACHE, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
