# verify: ok
"""Look-alike: the uneven chunks go through `scatter_object_list`, which pickles each chunk
and pads the byte buffers itself, so chunks of different lengths arrive intact.

Shard manifest scattered from the reader process in chunks of unequal length.

Modelled on https://github.com/bigscience-workshop/Megatron-DeepSpeed/pull/55 (a merge tool
scattered per-process work with `torch.distributed.scatter` as if it were a scatterv, and
deadlocked once the counts were uneven: "it's a true scatter rather than scatterv"). The
reader lists the shard files and splits their ids with `tensor_split`, which gives the first
chunks one more id when the count does not divide evenly; every process sizes its receive
buffer from the count it expects for itself, so the buffers differ in length across processes.
"""
import torch
import torch.distributed as dist

READER = 0


def expected_count(n, rank, world):
    return n // world + (1 if rank < n % world else 0)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    shard_ids = torch.arange(100, 105)  # five shard files, listed by the reader
    n = torch.tensor([len(shard_ids)])
    dist.broadcast(n, src=READER)
    received = [None]
    chunks = [c.tolist() for c in torch.tensor_split(shard_ids, world)] if rank == READER else None
    dist.scatter_object_list(received, chunks, src=READER)
    mine = torch.tensor(received[0], dtype=torch.long)
    assert len(mine) == expected_count(int(n.item()), rank, world)
    print(f"process {rank}: shards {mine.tolist()}")
    done = torch.tensor([len(mine)])
    dist.all_reduce(done)
    assert done.item() == len(shard_ids)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
