# verify: error,hang
"""Fine-tuning set-up that decides on its own shard whether to freeze the pretrained backbone.

Modelled on NVIDIA/apex#149 (https://github.com/NVIDIA/apex/issues/149): parameters frozen by hand
on the way into a data-parallel wrapper; the maintainer's answer is that the all-reduces need every
process to publish the same set of gradients, or they hang.

Here a few-shot heuristic picks linear probing (backbone frozen) when the shard holds fewer than
`MIN_SHOTS` rows per class, and full fine-tuning otherwise. Each process counts the classes of the
rows `DistributedSampler` hands it: process 0's even rows carry all four classes (4 rows each), process
1's odd rows only class 0 (16 rows). So process 0 freezes the backbone and process 1 does not. DDP's
start-up check and its gradient buckets take the parameters that require a gradient when it is
constructed: the check compares 2 parameters on process 0 with 6 on process 1 and raises on both
("DDP expects same model across all ranks").
"""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

MIN_SHOTS = 8


def make_dataset():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 16, generator=g)
    # even rows cycle through the four classes, odd rows are all the majority class 0
    y = torch.tensor([(i // 2) % 4 if i % 2 == 0 else 0 for i in range(32)])
    return TensorDataset(x, y)


def build_model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU()),  # "pretrained" backbone
        nn.Linear(16, 4),  # new head
    )


def main():
    dist.init_process_group("gloo")
    data = make_dataset()
    sampler = DistributedSampler(data, shuffle=False)
    loader = DataLoader(data, batch_size=4, sampler=sampler)

    labels = torch.stack([data[i][1] for i in sampler])
    shots_per_class = len(labels) / len(labels.unique())
    model = build_model()
    if shots_per_class < MIN_SHOTS:
        for p in model[0].parameters():
            p.requires_grad_(False)  # expect: BCL015
    print(f"rank {dist.get_rank()}: {shots_per_class:.0f} shots per class, "
          f"backbone {'frozen' if not model[0][0].weight.requires_grad else 'trained'}", flush=True)

    ddp = DDP(model)
    opt = torch.optim.SGD([p for p in ddp.parameters() if p.requires_grad], lr=0.1)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = F.cross_entropy(ddp(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
