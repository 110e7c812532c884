"""Batch sampler whose length is agreed by every process (helper of
sampler_len_allreduce_rank0_progress and its look-alike).

`__len__` all-reduces (MIN) the number of local batches so that every process stops after the
same number of steps; `__iter__` asks for that length too.
"""
import torch
import torch.distributed as dist
from torch.utils.data import Sampler


class AgreedBatchSampler(Sampler):
    def __init__(self, n_items, batch_size, rank, world):
        self.ids = list(range(rank, n_items, world))
        self.batch_size = batch_size

    def local_batches(self):
        return [self.ids[i:i + self.batch_size] for i in range(0, len(self.ids), self.batch_size)]

    def __len__(self):
        n = torch.tensor([len(self.local_batches())])
        dist.all_reduce(n, op=dist.ReduceOp.MIN)
        return int(n.item())

    def __iter__(self):
        return iter(self.local_batches()[: len(self)])
