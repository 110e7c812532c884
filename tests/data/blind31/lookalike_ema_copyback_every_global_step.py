# verify: ok check=PARAM_SUM
"""Look-alike: copy the EMA weights back into the online model on a step count every process shares.

Like `ema_copyback_every_local_samples_seen`, the processes take batches of different sizes
(6 rows and 2 under one token budget) and each counts the samples it has seen, for its own log.
The copy-back is keyed on the optimizer step instead, which is the same on every process, and
the EMA is updated from the DDP model's parameters, which are the same on every process too: the
copy happens at the same step everywhere and the models stay identical.
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

STEPS, TOKEN_BUDGET, COPY_EVERY_STEPS = 6, 12, 3
ROW_LENGTHS = [2, 6] * 48  # short rows at even positions, long rows at odd ones
PARAM_SUM = None


def batches(rank, world):
    g = torch.Generator().manual_seed(3 + rank)
    length = ROW_LENGTHS[rank::world][0]
    rows = TOKEN_BUDGET // length
    for _ in range(STEPS):
        x = torch.randn(rows, 4, generator=g)
        yield x, x.mean(dim=1, keepdim=True) * length


def main():
    global PARAM_SUM
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1))
    ema = AveragedModel(model.module, multi_avg_fn=get_ema_multi_avg_fn(0.5))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    samples_seen = 0
    for step, (x, y) in enumerate(batches(rank, world), start=1):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        ema.update_parameters(model.module)
        samples_seen += len(x)
        if step % COPY_EVERY_STEPS == 0:
            model.module.load_state_dict(ema.module.state_dict())
    PARAM_SUM = round(sum(float(p.sum()) for p in model.parameters()), 5)
    print(f"process {rank}: {samples_seen} samples, parameter sum {PARAM_SUM}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
