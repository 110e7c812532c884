# verify: ok
"""Look-alike: resume mid-epoch with `divmod(global_step, len(loader))` read on each process.

Like `resume_offset_from_local_loader_len`, each process saves its own checkpoint, reads it
back and computes the epoch and offset to resume from with its own loader's length. The loader
here draws from a `DistributedSampler`, which pads the dataset so that every process gets
`ceil(rows / world)` rows: 19 rows give 10 rows and 4 batches of at most 3 on each process, so
the length, the offset and the number of resumed DDP steps agree.
"""
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

EPOCHS, STOP_AT, ROWS, BATCH = 3, 6, 19, 3


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    run_dir = os.path.join(
        tempfile.gettempdir(),
        f"blind31-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-resume",
    )
    os.makedirs(run_dir, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(ROWS, 3, generator=g)
    data = TensorDataset(x, x.sum(dim=1, keepdim=True))
    sampler = DistributedSampler(data, shuffle=False)
    loader = DataLoader(data, batch_size=BATCH, sampler=sampler)
    batches = list(loader)

    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(3, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(STOP_AT):
        xb, yb = batches[step % len(loader)]
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(xb), yb).backward()
        optimizer.step()
    path = os.path.join(run_dir, f"state-{rank}.pt")
    torch.save({"global_step": STOP_AT, "model": model.module.state_dict()}, path)
    dist.barrier()

    state = torch.load(path)
    model.module.load_state_dict(state["model"])
    start_epoch, offset = divmod(state["global_step"], len(loader))
    resumed = 0
    for epoch in range(start_epoch, EPOCHS):
        for i, (xb, yb) in enumerate(batches):
            if epoch == start_epoch and i < offset:
                continue
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(xb), yb).backward()
            optimizer.step()
            resumed += 1
    print(f"process {rank}: {resumed} steps after resume", flush=True)
    dist.barrier()
    shutil.rmtree(run_dir, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
