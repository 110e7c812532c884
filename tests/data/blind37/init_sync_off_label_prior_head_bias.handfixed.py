# verify: ok check=HEAD_BIAS
"""Hand fix: DDP keeps its start-up broadcast (`init_sync=True`, the default), so rank 0's prior-initialised
bias reaches every replica before training.

The broken version: model set-up that skips DDP's start-up broadcast and then initialises the head from local data.

Modelled on pytorch/pytorch#142824 (https://github.com/pytorch/pytorch/pull/142824), which added
`DistributedDataParallel(..., init_sync=False)`: no parameter check and no broadcast of rank 0's
weights at construction, for jobs that know their replicas already agree.

Here every process builds the classifier from the same seed, so the weights agree, and the start-up
broadcast is turned off to save time. But the head's bias is then set to the log of the label prior
(a common trick for imbalanced data), counted over the rows `DistributedSampler` hands this process:
process 0's even rows are mostly class 0, process 1's odd rows mostly class 3. DDP averages the
gradients from then on, so both replicas move by the same steps, and the biases stay apart.
"""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

NUM_CLASSES = 4
HEAD_BIAS = None


def make_dataset():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 12, generator=g)
    y = torch.tensor([(0 if i % 3 else 1) if i % 2 == 0 else (3 if i % 3 else 2) for i in range(48)])
    return TensorDataset(x, y)


def build_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, NUM_CLASSES))


def init_head_from_prior(model, labels):
    counts = torch.bincount(labels, minlength=NUM_CLASSES).float() + 1.0
    with torch.no_grad():
        model[-1].bias.copy_(torch.log(counts / counts.sum()))


def main():
    global HEAD_BIAS
    dist.init_process_group("gloo")
    data = make_dataset()
    sampler = DistributedSampler(data, shuffle=False)
    loader = DataLoader(data, batch_size=6, sampler=sampler)

    model = build_model()
    init_head_from_prior(model, torch.stack([data[i][1] for i in sampler]))
    ddp = DDP(model)  # broadcasts rank 0's parameters, prior-initialised bias included
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = F.cross_entropy(ddp(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    HEAD_BIAS = [round(v, 4) for v in model[-1].bias.tolist()]
    print(f"rank {dist.get_rank()}: head bias {HEAD_BIAS}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
