# verify: ok
"""Hand-fixed `long_sequence_checkpoint_recomputes_norm_sync`: the processes agree on checkpointing.

Whether the step's sequences are long is all-reduced (MAX) before the block runs, so every process
checkpoints the block at the same steps and every process recomputes, and re-syncs, its norm in the
same backward pass (as pytorch/pytorch#147561 asks: one consistent decision across ranks).
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
        long_here = torch.tensor([float(x.shape[1] > LONG_SEQ)])
        dist.all_reduce(long_here, op=dist.ReduceOp.MAX)
        if long_here.item() > 0:
            h = checkpoint(self.block, h, use_reentrant=False)
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
