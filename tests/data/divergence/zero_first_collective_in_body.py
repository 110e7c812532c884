# verify: hang
"""The classic `torch_distributed_zero_first` context manager: the other ranks wait at a barrier
before the body, rank 0 meets them at a barrier after it. Correct on its own, but this body
broadcasts the vocabulary size it just built, so rank 0 reaches the broadcast while rank 1 still
waits at the entry barrier.

Modelled on huggingface/trl#7241 (https://github.com/huggingface/trl/pull/7241), whose review
checked that "none of the ten guarded blocks contains a collective, so the extra wave cannot
deadlock on a body-internal barrier", and on pytorch/ignite#2923
(https://github.com/pytorch/ignite/issues/2923) for the shape of the context manager.
"""
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
        dist.broadcast(size, src=0)  # expect: BCL005
    embedding = torch.nn.Embedding(int(size.item()), 4)
    print(f"rank {rank}: embedding {tuple(embedding.weight.shape)}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
