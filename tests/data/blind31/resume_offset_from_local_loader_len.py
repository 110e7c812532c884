# verify: hang,error
"""Resume mid-epoch with the epoch and offset computed from this process's own loader length.

Modelled on https://github.com/verl-project/verl/pull/5725: on resume, `current_epoch =
global_steps // len(train_dataloader)` and the saved loader position decide where training
picks up, and the arithmetic went wrong at an epoch boundary.

Batches are packed per process under a token budget, so the processes hold different numbers of
batches (5 and 4). Training agrees on a common number of steps per epoch (an all-reduce, MIN),
and the first leg stops after 6 steps and saves a checkpoint per process. On resume each process
computes `divmod(global_step, len(batches))` with its own batch count instead of the agreed steps
per epoch: process 0 resumes at epoch 1, offset 1 and runs 7 more DDP steps, process 1 at epoch
1, offset 2 and runs 6.
"""
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

EPOCHS, STOP_AT, TOKEN_BUDGET = 3, 6, 12
LENGTHS = [6, 4] * 10  # long sequences at even positions, short ones at odd positions


def pack(lengths, seed):
    g = torch.Generator().manual_seed(seed)
    batches, current = [], []
    for n in lengths:
        if current and sum(current) + n > TOKEN_BUDGET:
            batches.append(current)
            current = []
        current.append(n)
    batches.append(current)
    return [torch.randn(sum(b), 3, generator=g) for b in batches]


def train_on(model, optimizer, tokens):
    optimizer.zero_grad()
    loss = (model(tokens) - tokens.sum(dim=1, keepdim=True)).pow(2).mean()
    return loss


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    run_dir = os.path.join(
        tempfile.gettempdir(),
        f"blind31-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-resume",
    )
    os.makedirs(run_dir, exist_ok=True)
    batches = pack(LENGTHS[rank::world], seed=rank)
    agreed = torch.tensor(len(batches))
    dist.all_reduce(agreed, op=dist.ReduceOp.MIN)
    steps_per_epoch = int(agreed)

    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(3, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(STOP_AT):
        loss = train_on(model, optimizer, batches[step % steps_per_epoch])
        loss.backward()
        optimizer.step()
    path = os.path.join(run_dir, f"state-{rank}.pt")
    torch.save({"global_step": STOP_AT, "model": model.module.state_dict()}, path)
    dist.barrier()

    state = torch.load(path)
    model.module.load_state_dict(state["model"])
    start_epoch, offset = divmod(state["global_step"], len(batches))
    resumed = 0
    for epoch in range(start_epoch, EPOCHS):
        for i in range(steps_per_epoch):
            if epoch == start_epoch and i < offset:
                continue
            loss = train_on(model, optimizer, batches[i])
            loss.backward()  # expect: BCL011
            optimizer.step()
            resumed += 1
    print(f"process {rank}: {resumed} steps after resume", flush=True)
    dist.barrier()
    shutil.rmtree(run_dir, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
