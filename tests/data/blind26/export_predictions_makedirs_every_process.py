# verify: error,hang
"""Every process creates the shared predictions directory with `os.makedirs` and no `exist_ok`.

Modelled on https://github.com/allenai/allennlp/issues/3841 (distributed training on one
machine: each process's writer created the same log directory, and all but the first died with
`FileExistsError: [Errno 17] File exists`).

After evaluation each process exports its own predictions to `preds/preds-rank<r>.pt`, and a
barrier waits for every file before they are merged. `export_predictions` runs on every process
and creates the directory with `os.makedirs(out_dir)`: exactly one `mkdir` succeeds, the other
process raises `FileExistsError` and never reaches the barrier. The processes part ways through
the filesystem, by an exception.
"""
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind26-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-export",
)


def export_predictions(preds, out_dir, rank):
    os.makedirs(out_dir)
    torch.save(preds, os.path.join(out_dir, f"preds-rank{rank}.pt"))


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    x = torch.randn(40, 6)
    data = TensorDataset(x, (x.sum(1) > 0).long())
    model = DDP(nn.Linear(6, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sampler = DistributedSampler(data, shuffle=False)
    for xb, yb in DataLoader(data, batch_size=5, sampler=sampler):
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        preds = torch.cat([model.module(xb).argmax(1) for xb, _ in DataLoader(data, batch_size=5, sampler=sampler)])
    pred_dir = os.path.join(RUN_DIR, "preds")
    export_predictions(preds, pred_dir, rank)  # expect: BCL005
    dist.barrier()
    merged = torch.cat([torch.load(os.path.join(pred_dir, f"preds-rank{r}.pt")) for r in range(world)])
    print(f"rank {rank}: {merged.numel()} predictions merged", flush=True)
    dist.barrier()
    shutil.rmtree(RUN_DIR, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
