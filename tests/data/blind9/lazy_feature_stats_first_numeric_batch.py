# verify: error
"""Feature statistics all-reduced lazily, on the first batch that carries numeric features.

Modelled on precice/micro-manager#238 (https://github.com/precice/micro-manager/pull/238: lazy
initialisation that broke on ranks without an active problem) and vllm-project/vllm-ascend#14121
(https://github.com/vllm-project/vllm-ascend/issues/14121: a first-request lazy init that ranks
reach at different times, splitting the order of later collectives). ``FeatureScaler.scale()``
computes the global mean and standard deviation of the numeric columns the first time it is
asked for them: an all-reduce of (sum, sum of squares, count) over the rank's own rows. Batches
of text-only records have no numeric columns and skip scaling. The records are dealt out
``RECORDS[rank::world]``: rank 0's first batch is numeric, rank 1's first two are text only, so
rank 0 all-reduces its statistics before its first gradient all-reduce and rank 1 after its
second.
"""
import torch
import torch.distributed as dist
from torch import nn

# (kind, numeric features); text records carry zeros and are not scaled
RECORDS = [
    ("numeric", [3.0, 10.0]), ("text", [0.0, 0.0]),
    ("numeric", [5.0, 14.0]), ("text", [0.0, 0.0]),
    ("text", [0.0, 0.0]), ("text", [0.0, 0.0]),
    ("text", [0.0, 0.0]), ("text", [0.0, 0.0]),
    ("numeric", [4.0, 12.0]), ("numeric", [6.0, 9.0]),
    ("numeric", [2.0, 11.0]), ("numeric", [7.0, 13.0]),
]
BATCH = 2


class FeatureScaler:
    def __init__(self, rows):
        self.rows = rows
        self._stats = None

    def _global_stats(self):
        x = torch.tensor([f for kind, f in self.rows if kind == "numeric"]).reshape(-1, 2)
        acc = torch.cat([x.sum(0), (x * x).sum(0), torch.tensor([float(len(x))])])
        dist.all_reduce(acc)
        n = acc[4]
        mean = acc[:2] / n
        std = (acc[2:4] / n - mean * mean).clamp_min(1e-6).sqrt()
        return mean, std

    def scale(self, x):
        if self._stats is None:
            self._stats = self._global_stats()  # expect: BCL005
        mean, std = self._stats
        return (x - mean) / std


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    mine = RECORDS[rank::world]
    scaler = FeatureScaler(mine)
    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for start in range(0, len(mine), BATCH):
        batch = mine[start:start + BATCH]
        x = torch.tensor([f for _, f in batch])
        if any(kind == "numeric" for kind, _ in batch):
            x = scaler.scale(x)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        flat = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
        dist.all_reduce(flat)
        offset = 0
        for p in model.parameters():
            p.grad.copy_(flat[offset:offset + p.numel()].reshape(p.shape) / world)
            offset += p.numel()
        opt.step()
    print(f"rank {rank}: weight {model.weight.data.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
