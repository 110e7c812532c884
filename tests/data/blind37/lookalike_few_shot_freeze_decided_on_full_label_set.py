# verify: ok
"""Look-alike: the same few-shot fine-tuning set-up as `few_shot_shard_freezes_backbone_before_ddp`,
with each process counting the classes of the rows `DistributedSampler` hands it, but those counts
only go into a printed report of the shard; the decision to freeze the backbone is taken on the
labels of the whole dataset, which every process holds alike (8 rows per class: full fine-tuning
everywhere). Correct.
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
    local_shots = len(labels) / len(labels.unique())
    all_labels = data.tensors[1]
    shots_per_class = len(all_labels) / len(all_labels.unique())
    model = build_model()
    if shots_per_class < MIN_SHOTS:
        for p in model[0].parameters():
            p.requires_grad_(False)
    print(f"rank {dist.get_rank()}: {local_shots:.0f} shots per class in this shard, "
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
