# verify: ok
"""Hand fix: the node's unpacked cache is removed only after every process has finished reading it.

Modelled on https://github.com/mosaicml/streaming/issues/400: on a multi-node run, a process
removed a cached shard file (`os.remove(zip_filename)` after unpacking) that another process
sharing the same local cache still needed, and that process failed with FileNotFoundError.

Fixed with a barrier between the evaluation loop and the cleanup: rank 0, done first, waits
there until rank 1 has read its last (slow) row, and only then does either remove the cache.
"""
import os
import shutil
import tempfile
import time

import torch
import torch.distributed as dist
from filelock import FileLock

BASE = os.path.join(
    tempfile.gettempdir(), f"blind40-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-eval"
)
ROWS_PER_SHARD = 8


def unpack_once(cache):
    with FileLock(cache + ".lock"):
        if os.path.exists(os.path.join(cache, "DONE")):
            return
        os.makedirs(cache, exist_ok=True)
        g = torch.Generator().manual_seed(0)
        for i in range(4):
            x = torch.randn(ROWS_PER_SHARD, 5, generator=g)
            x[:, 4] = (torch.arange(ROWS_PER_SHARD) % 2).float()  # long recordings at odd rows
            torch.save(x, os.path.join(cache, f"shard{i}.pt"))
        open(os.path.join(cache, "DONE"), "w").close()


def read_row(cache, index):
    row = torch.load(os.path.join(cache, f"shard{index // ROWS_PER_SHARD}.pt"))[index % ROWS_PER_SHARD]
    if row[4] > 0:
        time.sleep(0.15)  # decoding a long recording
    return row


def main():
    dist.init_process_group("gloo")
    cache = os.path.join(BASE, "node-cache")
    os.makedirs(BASE, exist_ok=True)
    unpack_once(cache)
    dist.barrier()  # the node's cache is complete before anyone reads it
    torch.manual_seed(0)
    w = torch.randn(4)
    err = torch.zeros(2)
    for index in range(dist.get_rank(), 4 * ROWS_PER_SHARD, dist.get_world_size()):
        row = read_row(cache, index)
        err += torch.stack([(row[:4] @ w) ** 2, torch.tensor(1.0)])
    dist.barrier()  # nobody is still reading the cache
    shutil.rmtree(cache, ignore_errors=True)  # free the node's disk for the next stage
    dist.all_reduce(err)
    print(f"rank {dist.get_rank()}: mse {float(err[0] / err[1]):.3f}")
    shutil.rmtree(BASE, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
