"""Distributed helpers shared by the programs of this directory (not a program itself)."""
from contextlib import contextmanager

import torch.distributed as dist


@contextmanager
def torch_distributed_zero_first(local_rank):
    """Let the local master do something first (download, cache); the others wait for it."""
    if local_rank not in (-1, 0):
        dist.barrier()
    yield
    if local_rank == 0:
        dist.barrier()
