# verify: error,hang
"""Each process removes the node's unpacked cache as soon as its own evaluation shard is done.

Modelled on https://github.com/mosaicml/streaming/issues/400: on a multi-node run, a process
removed a cached shard file (`os.remove(zip_filename)` after unpacking) that another process
sharing the same local cache still needed, and that process failed with FileNotFoundError.

Here the two processes of one node share its local cache: the first to take the file lock unpacks
the evaluation shards, both wait at a barrier until that is done, each process then reads its own
rows lazily from them, and each frees the disk with `shutil.rmtree(cache, ignore_errors=True)`
when its loop ends, which looks harmless because every process removes the same folder. The long
recordings sit at odd rows, all in rank 1's strided share, and decode slowly, so rank 0 finishes
first and deletes the cache under rank 1, which raises while rank 0 waits in the all-reduce of the
error sums.
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
    shutil.rmtree(cache, ignore_errors=True)  # free the node's disk for the next stage
    dist.all_reduce(err)  # expect: BCL005
    print(f"rank {dist.get_rank()}: mse {float(err[0] / err[1]):.3f}")
    shutil.rmtree(BASE, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
