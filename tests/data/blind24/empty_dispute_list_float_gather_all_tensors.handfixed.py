# verify: ok
"""Hand fix: the id tensor is built with `dtype=torch.long`, so an empty list is int64 too.

Modelled on pytorch/pytorch#110561 (https://github.com/pytorch/pytorch/pull/110561): a gather failed
because the local shards were empty on some ranks, and the tensor built there from nothing was
float32 while the others held float16. Here each process scans its share of the annotation records
for ids whose two annotators disagree and sends `torch.tensor(disputed)`: int64 where it found some,
float32 where the list is empty (`torch.tensor([])`). `gather_all_tensors` pads the lengths to agree
but not the dtypes, so the processes send buffers of different byte sizes into one all-gather
(three int64 against three float32).
"""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torchmetrics.utilities.distributed import gather_all_tensors

# (record id, first annotator's label, second annotator's label); disputes fall on even positions
RECORDS = [(i, i % 3, (i % 3) if i % 4 else (i + 1) % 3) for i in range(12)]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    mine = RECORDS[rank::world]
    disputed = [rid for rid, a, b in mine if a != b]
    gathered = gather_all_tensors(torch.tensor(disputed, dtype=torch.long))
    excluded = {int(i) for part in gathered for i in part.tolist()}

    train = [(rid, a) for rid, a, _ in mine if rid not in excluded]
    x = torch.tensor([[float(rid), float(rid % 5)] for rid, _ in train])
    y = torch.tensor([label for _, label in train])
    torch.manual_seed(0)
    model = DDP(nn.Linear(2, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    if rank == 0:
        print(f"excluded {sorted(excluded)}, loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
