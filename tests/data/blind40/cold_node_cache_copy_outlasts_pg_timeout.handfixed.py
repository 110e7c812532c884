# verify: ok nproc=1 nnodes=2
"""Hand fix: the nodes copy their shards in rounds and agree after each round that copying goes on.

Modelled on https://github.com/rwth-i6/returnn/issues/1638: with a per-node `FileCache`, the nodes
that already hold their files on local disk enter the training loop and wait in an all-reduce
while the other nodes are still copying; when copying outlasts the process group's timeout, the
waiting nodes fail with a gloo timeout.

Fixed as the report proposes (a regular sync while the data is cached): every process copies one
chunk per round and all-reduces whether it still has chunks to copy, so node 0, done after two
rounds, keeps answering node 1's rounds and no collective waits longer than one chunk.
"""
import datetime
import os
import shutil
import tempfile
import time

import numpy
import torch
import torch.distributed as dist

BASE = os.path.join(
    tempfile.gettempdir(), f"blind40-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-cache"
)
SHARD_ROWS = [8, 96]  # shard i is trained on by node i


def node_cache():
    # each machine's own local disk (two simulated nodes share this host)
    return os.path.join(BASE, f"node{os.environ['GROUP_RANK']}")


def remote_shard(i):
    """Shard i on the shared store (written here, as the data pipeline would have)."""
    store = os.path.join(BASE, "store")
    os.makedirs(store, exist_ok=True)
    path = os.path.join(store, f"shard{i}.bin")
    g = torch.Generator().manual_seed(i)
    torch.randn(SHARD_ROWS[i], 4, generator=g).numpy().tofile(path)
    return path


def fetch(src, cache):
    """Copy src into the local cache, one chunk per round, in step with the other processes."""
    dst = os.path.join(cache, os.path.basename(src))
    done = os.path.exists(dst) and os.path.getsize(dst) == os.path.getsize(src)
    fin = fout = None
    if not done:
        fin, fout = open(src, "rb"), open(dst, "wb")
    while True:
        if not done:
            chunk = fin.read(64)
            if chunk:
                time.sleep(0.4)  # throttled network file system
                fout.write(chunk)
            else:
                fin.close()
                fout.close()
                done = True
        pending = torch.tensor([0 if done else 1])
        dist.all_reduce(pending)
        if pending.item() == 0:
            return dst


def main():
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=6))
    rank = dist.get_rank()
    src = remote_shard(rank)
    cache = node_cache()
    os.makedirs(cache, exist_ok=True)
    local = fetch(src, cache)
    x = torch.from_numpy(numpy.fromfile(local, dtype="float32")).view(-1, 4)
    steps = torch.tensor([len(x) // 4])
    dist.all_reduce(steps, op=dist.ReduceOp.MIN)
    w = torch.zeros(4)
    for step in range(int(steps)):
        grad = x[step * 4: step * 4 + 4].mean(0) - w
        dist.all_reduce(grad)
        w += 0.1 * grad / dist.get_world_size()
    dist.barrier()
    shutil.rmtree(BASE, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
