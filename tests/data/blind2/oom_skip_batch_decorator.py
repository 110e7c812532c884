# verify: hang
"""Skip a batch that runs out of memory; the other rank goes on to average gradients.

Modelled on https://github.com/pytorch/pytorch/issues/44353: "when I catch the gpu OOM exception
[...] I just ignore this batch", and "when one process catch the exception, the others get
blocked" (skipping the communication desynchronises the collectives). Here the skip comes from a
decorator in another module that turns the error into a None loss.
"""
import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DistributedSampler

from mod_oom_guard import skip_on_oom

MAX_TOKENS = 96  # what fits on the device


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


@skip_on_oom
def forward_backward(model, batch):
    loss = model(batch)
    loss.backward()
    return loss


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = TinyLM()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    # one very long sequence; the sampler hands it to rank 1
    lengths = [4, 4, 6, 6, 5, 20, 3, 3]
    for idx in DistributedSampler(lengths, shuffle=False):
        batch = torch.randn(lengths[idx], 8)
        opt.zero_grad()
        loss = forward_backward(model, batch)
        if loss is None:
            continue
        average_gradients(model)  # expect: BCL005
        opt.step()
    print(f"rank {dist.get_rank()} done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
