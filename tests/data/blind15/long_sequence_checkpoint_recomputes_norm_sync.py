# verify: error
"""Activation checkpointing chosen per batch re-runs a cross-process norm in the backward pass.

Modelled on pytorch/pytorch#147561 (https://github.com/pytorch/pytorch/pull/147561): the
partitioner must not decide on its own, rank by rank, which collectives to recompute in the
backward pass, because "every rank [must] make a consistent decision about which collectives are
recomputed"; otherwise ranks that recompute a collective and ranks that do not hang against each
other.

Here the program makes that decision itself, per batch: `Encoder.forward` wraps its block in
`torch.utils.checkpoint.checkpoint` only for sequences longer than `LONG_SEQ`, to save activation
memory. The block's `CrossReplicaNorm` all-reduces its batch statistics in its forward, so a
checkpointed block all-reduces them a second time when autograd recomputes it in the backward pass.
Process 0's second batch is long; process 1's are all short: process 0 recomputes (one more
all-reduce of 17 floats) while process 1 has finished its backward and all-reduces the gradients.
"""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

LONG_SEQ = 8
FEATURES = 4
WIDTH = 8
# (rank, step) -> sequence length of that batch; only process 0 ever meets a long one
LENGTHS = {0: [6, 12, 5], 1: [7, 4, 8]}


class CrossReplicaNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        flat = x.reshape(-1, x.shape[-1])
        packed = torch.cat([flat.sum(0), (flat * flat).sum(0), torch.tensor([float(flat.shape[0])])]).detach()
        dist.all_reduce(packed)
        dim = x.shape[-1]
        count = packed[-1]
        mean = packed[:dim] / count
        var = packed[dim : 2 * dim] / count - mean * mean
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.inner = nn.Linear(dim, dim)
        self.norm = CrossReplicaNorm(dim)
        self.outer = nn.Linear(dim, dim)

    def forward(self, h):
        return h + self.outer(torch.relu(self.norm(self.inner(h))))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(FEATURES, WIDTH)
        self.block = Block(WIDTH)
        self.head = nn.Linear(WIDTH, 1)

    def forward(self, x):
        h = self.embed(x)
        if x.shape[1] > LONG_SEQ:
            h = checkpoint(self.block, h, use_reentrant=False)  # expect: BCL011
        else:
            h = self.block(h)
        return self.head(h.mean(1))


def average_gradients(model, world):
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= world


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = Encoder()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(100 + rank)
    for length in LENGTHS[rank]:
        x = torch.randn(2, length, FEATURES, generator=gen)
        y = x.mean((1, 2)).unsqueeze(1)
        optimizer.zero_grad()
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        average_gradients(model, world)
        optimizer.step()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
