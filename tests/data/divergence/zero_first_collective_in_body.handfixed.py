"""The broadcast moves out of the `zero_first` body, where every rank reaches it."""
import contextlib

import torch
import torch.distributed as dist

CORPUS = "the cat sat on the mat the end".split()


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
    with zero_first(rank):
        vocabulary = sorted(set(CORPUS))  # rank 0 builds and caches it; the others read the cache
    size = torch.tensor([len(vocabulary)])
    dist.broadcast(size, src=0)
    embedding = torch.nn.Embedding(int(size.item()), 4)
    print(f"rank {rank}: embedding {tuple(embedding.weight.shape)}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
