# verify: ok
"""Hand fix: only the finite relative errors go into the histogram, so no process raises.

Modelled on https://github.com/milesial/Pytorch-UNet/issues/429 ("ValueError: autodetected range of
[nan, nan] is not finite"): a histogram logged during training (there `wandb.Histogram`, which calls
`numpy.histogram`) raises once the values contain a non-finite number, and training stops. Under
DDP the values are each process's own: here the relative error `|pred - y| / |y|` of the current
batch. Process 1's shard holds blank rows (all-zero features and target), so at the first report
step its relative errors contain inf, `numpy.histogram` raises on that process alone, and
process 0 is left in the backward's gradient all-reduce.
"""
import os
import shutil
import tempfile

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind36-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-hist",
)
REPORT_EVERY = 3


def shard(rank, world_size):
    gen = torch.Generator().manual_seed(30)
    x = torch.randn(48, 4, generator=gen)
    x[32:36] = 0.0  # blank records in the export
    per = len(x) // world_size
    x = x[rank * per:(rank + 1) * per]
    return x, x.sum(dim=1, keepdim=True)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    os.makedirs(RUN_DIR, exist_ok=True)
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = shard(rank, dist.get_world_size())
    report = open(os.path.join(RUN_DIR, f"hist-{rank}.txt"), "w")

    for step, i in enumerate(range(0, 24, 4)):
        pred = model(x[i:i + 4])
        loss = torch.nn.functional.mse_loss(pred, y[i:i + 4])
        if step % REPORT_EVERY == 2:
            rel = ((pred - y[i:i + 4]).abs() / y[i:i + 4].abs()).detach().numpy()
            counts, edges = np.histogram(rel[np.isfinite(rel)], bins=5)
            report.write(f"step {step}: {counts.tolist()} {np.round(edges, 3).tolist()}\n")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    report.close()
    dist.barrier()
    if rank == 0:
        shutil.rmtree(RUN_DIR, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
