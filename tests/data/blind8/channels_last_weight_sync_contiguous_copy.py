# verify: divergent check=CONV_WEIGHT_SUM
"""Initial weights "synchronised" by broadcasting `p.data.contiguous()`: a copy for channels_last weights.

Modelled on open-mmlab/mmengine#948 (`data_on_device = data_on_device.contiguous()` before the
broadcast, "broadcast requires tensor is contiguous") and pytorch/pytorch#94907 ("a new block of
memory is allocated for the contiguous tensor to be created. Thus the returned tensor will be
different than the one passed in"); pytorch/tutorials#1613: "contiguous never mutates self".

    https://github.com/open-mmlab/mmengine/pull/948
    https://github.com/pytorch/pytorch/issues/94907

Each process seeds torch with `seed + rank` (for its own augmentations) before building the
model, so `broadcast_parameters()` must copy process 0's initial weights everywhere. It hands
`dist.broadcast` `p.data.contiguous()`: for the Linear layer that is the parameter itself, but
the model was moved to channels_last, so for the conv weight it is a fresh copy, which receives
process 0's values and is dropped. The gradients are averaged every step, so the conv weights
stay as far apart as they started. `CONV_WEIGHT_SUM` is compared across processes at the end.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

SEED, STEPS = 7, 4
CONV_WEIGHT_SUM = None


def broadcast_parameters(module, src=0):
    for p in module.parameters():
        dist.broadcast(p.data.contiguous(), src=src)  # expect: BCL010


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
