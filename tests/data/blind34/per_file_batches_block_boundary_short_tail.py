# verify: hang,error
"""Equal rows per process, but batches that never span two files: short batches mid-stream.

Modelled on https://github.com/ray-project/ray/pull/66086 (`iter_batches` emits short batches
at block boundaries; "`streaming_split(equal=True)` equalizes rows per worker but not blocks,
so ranks get different batch counts, run a different number of steps, and hang in the
epoch-end all-reduce"). Each process streams its own part files, 40 rows each, but split
into files of 30 + 10 rows on process 0 and 24 + 16 on process 1. The reader batches every
file on its own (8 rows, a short tail per file), so process 0 reads 6 batches and process 1
5, and process 0's sixth gradient all-reduce has no partner. What parts the processes: the
files of each process's shard (how its rows are cut into blocks).
"""
import os
import shutil
import tempfile

import torch
import torch.distributed as dist

BATCH = 8
FILE_ROWS = {0: [30, 10], 1: [24, 16]}  # 40 rows on each process


def shard_dir(rank):
    tag = f"{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}"
    return os.path.join(tempfile.gettempdir(), f"blind34-{tag}-parts-{rank}")


def write_shard(rank):
    root = shard_dir(rank)
    os.makedirs(root, exist_ok=True)
    g = torch.Generator().manual_seed(rank)
    for k, n in enumerate(FILE_ROWS[rank]):
        x = torch.randn(n, 6, generator=g)
        torch.save({"x": x, "y": x.sum(1, keepdim=True)}, os.path.join(root, f"part-{k:02d}.pt"))
    return root


def stream_batches(root, batch):
    for name in sorted(os.listdir(root)):
        part = torch.load(os.path.join(root, name))
        for i in range(0, len(part["x"]), batch):
            yield part["x"][i : i + batch], part["y"][i : i + batch]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    root = write_shard(rank)

    torch.manual_seed(0)
    model = torch.nn.Linear(6, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    steps = 0
    for x, y in stream_batches(root, BATCH):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)  # expect: BCL005
            p.grad /= world
        opt.step()
        steps += 1
    print(f"rank {rank}: {steps} steps")

    dist.barrier()
    shutil.rmtree(root, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
