# verify: ok
"""Look-alike: rows assigned to processes by the built-in `hash()` of their integer ids.

Modelled on uber/petastorm#247 (https://github.com/uber/petastorm/pull/247): sharding by
`hash()` of a parquet file path; since Python 3.3 `hash()` of a str is salted per process
(PYTHONHASHSEED is random by default), so processes disagree about which file is whose.

Each process keeps the files with `hash(name) % num_processes == process_index`, reads their
rows and trains on them without handing the loader to accelerate (the files are "already
sharded"). The salt differs between the two processes, so each keeps its own random subset of
the 24 files: some rows are read twice, some never, and the two shares have different row
counts, so one process runs out of batches while the other still waits in DDP's gradient
all-reduce.

Here `hash()` is applied to integer row ids, which are not salted (`hash(n) == n` for a small
int): every process computes the same assignment, alternate rows, 150 of the 300 each.
"""
import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

FILES = {f"part-{i:05d}.parquet": i + 1 for i in range(24)}  # file name -> rows


def read_rows(name, n):
    seed = int(name[5:10])
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 6, generator=gen)
    return x, x.sum(dim=1, keepdim=True)


def main():
    accelerator = Accelerator(cpu=True)
    world, me = accelerator.num_processes, accelerator.process_index
    mine = sorted(FILES)
    parts = [read_rows(name, FILES[name]) for name in mine]
    row_ids = range(sum(FILES.values()))
    keep = torch.tensor([hash(row_id) % world == me for row_id in row_ids])
    x = torch.cat([p[0] for p in parts])[keep]
    y = torch.cat([p[1] for p in parts])[keep]
    loader = DataLoader(TensorDataset(x, y), batch_size=1)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model, opt = accelerator.prepare(model, opt)
    for xb, yb in loader:
        loss = nn.functional.mse_loss(model(xb), yb)
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
    accelerator.wait_for_everyone()
    print(f"[process {me}] {len(mine)} files, {len(x)} rows, {len(loader)} batches")


if __name__ == "__main__":
    main()
