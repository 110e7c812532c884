# verify: ok check=HEAD_BIAS
"""Look-alike: DDP's start-up broadcast is off (`init_sync=False`) and the head's bias is set from the
label prior after the model is built, as in `init_sync_off_label_prior_head_bias`, but the class counts
are summed over every process (`dist.all_reduce`) before the prior is taken, so every replica sets the
same bias and the replicas agree without the broadcast. Correct.
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
    counts = torch.bincount(labels, minlength=NUM_CLASSES).float()
    dist.all_reduce(counts)  # the prior of the whole training set
    counts += 1.0
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
    ddp = DDP(model, init_sync=False)  # same seed everywhere, so no need to broadcast
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
