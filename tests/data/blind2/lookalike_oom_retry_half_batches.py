# verify: ok
"""Like `oom_skip_batch_decorator`, but a batch that runs out of memory is retried in halves
(gradient accumulation) instead of skipped, so every rank still averages gradients every step.
"""
import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DistributedSampler

MAX_TOKENS = 96


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 1)

    def forward(self, batch):
        if batch.numel() > MAX_TOKENS:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return self.proj(batch).pow(2).mean()


def average_gradients(model):
    world = dist.get_world_size()
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= world


def forward_backward(model, batch):
    try:
        model(batch).backward()
    except RuntimeError as err:
        if "out of memory" not in str(err) or len(batch) < 2:
            raise
        half = len(batch) // 2
        forward_backward(model, batch[:half])
        forward_backward(model, batch[half:])


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = TinyLM()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    lengths = [4, 4, 6, 6, 5, 20, 3, 3]
    for idx in DistributedSampler(lengths, shuffle=False):
        batch = torch.randn(lengths[idx], 8)
        opt.zero_grad()
        forward_backward(model, batch)
        average_gradients(model)
        opt.step()
    print(f"rank {dist.get_rank()} done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
