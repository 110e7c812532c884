# verify: error
"""A two-stage detector under DDP whose refinement head runs only on batches that hold a box.

Modelled on https://github.com/open-mmlab/mmdetection3d/issues/488 (a two-stage network in the
shape of PartA2: the second stage's parameters take part in the loss only when the first stage has
something to refine; DDP without `find_unused_parameters=True` stops with "Expected to have
finished reduction in the prior iteration before starting a new one").

The rows are dealt `ROWS[rank::world]`; the box flags of process 1's first batch are all false,
so its `refine` head gets no gradient, its DDP bucket never becomes ready and the gradient
all-reduce that process 0's backward starts is never started there.
"""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

# (features, has_box) rows; rows 1 and 3 (process 1's first batch) hold no box.
ROWS = [
    ([0.5, 1.0, -0.2, 0.3], True), ([0.1, -0.4, 0.9, 0.2], False),
    ([1.2, 0.3, 0.4, -0.6], True), ([-0.3, 0.8, 0.1, 0.5], False),
    ([0.7, -0.1, 0.2, 0.9], True), ([0.4, 0.6, -0.8, 0.1], True),
    ([0.2, 0.2, 0.3, -0.4], False), ([0.9, -0.5, 0.6, 0.3], True),
]
BATCH = 2


class TwoStage(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 8)
        self.objectness = nn.Linear(8, 1)
        self.refine = nn.Linear(8, 4)

    def forward(self, x, has_box):
        h = torch.relu(self.backbone(x))
        loss = self.objectness(h).pow(2).mean()
        if has_box.any():
            loss = loss + self.refine(h[has_box]).pow(2).mean()  # expect: BCL011
        return loss


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(TwoStage())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    mine = ROWS[rank::world]
    for start in range(0, len(mine), BATCH):
        chunk = mine[start:start + BATCH]
        x = torch.tensor([feats for feats, _ in chunk])
        has_box = torch.tensor([box for _, box in chunk])
        loss = model(x, has_box)
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.barrier()
    print(f"rank {rank} done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
