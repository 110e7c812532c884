# verify: ok
"""Correct: `zero_first` used as intended, with only local work in its body (rank 0 builds the
cache, the others then read it); the barriers pair up (each rank runs one), and the broadcast
comes after the `with`."""
import contextlib
import os
import tempfile

import torch
import torch.distributed as dist


@contextlib.contextmanager
def zero_first(rank):
    if rank != 0:
        dist.barrier()
    yield
    if rank == 0:
        dist.barrier()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    cache = os.path.join(tempfile.gettempdir(), f"vocab-{os.environ['MASTER_PORT']}.pt")
    with zero_first(rank):
        if not os.path.exists(cache):
            torch.save(sorted(set("the cat sat on the mat".split())), cache)
        vocabulary = torch.load(cache)
    size = torch.tensor([len(vocabulary)])
    dist.broadcast(size, src=0)
    print(f"rank {rank}: vocabulary of {size.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
