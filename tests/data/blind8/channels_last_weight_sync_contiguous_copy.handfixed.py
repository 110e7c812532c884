# verify: ok check=CONV_WEIGHT_SUM
"""Hand-fixed twin of channels_last_weight_sync_contiguous_copy.py.

As mmengine does after its `.contiguous()`, the received buffer is copied back into the
parameter when it is not the parameter itself, so the channels_last conv weight gets process
0's values too and `CONV_WEIGHT_SUM` agrees on every process.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

SEED, STEPS = 7, 4
CONV_WEIGHT_SUM = None


def broadcast_parameters(module, src=0):
    for p in module.parameters():
        buffer = p.data.contiguous()
        dist.broadcast(buffer, src=src)
        if buffer.data_ptr() != p.data.data_ptr():
            p.data.copy_(buffer)


def average_gradients(module):
    grads = [p.grad for p in module.parameters()]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat /= dist.get_world_size()
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view(g.shape))
        offset += g.numel()


def main():
    global CONV_WEIGHT_SUM
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(SEED + rank)
    model = nn.Sequential(
        nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2)
    ).to(memory_format=torch.channels_last)
    broadcast_parameters(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(STEPS):
        images = torch.randn(4, 3, 8, 8).to(memory_format=torch.channels_last)
        labels = torch.randint(0, 2, (4,))
        loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        average_gradients(model)
        optimizer.step()
    CONV_WEIGHT_SUM = round(model[0].weight.sum().item(), 4)
    print(f"[rank {rank}] conv weight sum {CONV_WEIGHT_SUM}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
