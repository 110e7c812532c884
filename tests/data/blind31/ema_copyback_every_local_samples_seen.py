# verify: divergent check=PARAM_SUM
"""Copy the EMA weights back into the online model every N samples of this process's own count.

Modelled on https://github.com/lucidrains/ema-pytorch/issues/9 ("Using EMA in a DDP setup"):
the EMA wrapper's `update_model_with_ema_every` option copies the averaged weights back into the
online model, and a comment asks what becomes of the model copies on the other devices when that
happens on one process only.

Batches are built under a token budget, so process 0 (short rows) takes 6 rows per batch and
process 1 (long rows) 2. Both run the same 6 DDP steps, and the EMA is updated on both after
every step. The copy-back is keyed on `samples_seen`, this process's own count: process 0
reaches 24 samples at its fourth step and loads the EMA weights into the model; process 1 never
does. DDP keeps gradients in step but not parameters, so the models stay apart.
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

STEPS, TOKEN_BUDGET, COPY_EVERY = 6, 12, 24
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
    samples_seen, next_copy = 0, COPY_EVERY
    for x, y in batches(rank, world):
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        ema.update_parameters(model.module)
        samples_seen += len(x)
        if samples_seen >= next_copy:
            model.module.load_state_dict(ema.module.state_dict())  # expect: BCL002
            next_copy += COPY_EVERY
    PARAM_SUM = round(sum(float(p.sum()) for p in model.parameters()), 5)
    print(f"process {rank}: {samples_seen} samples, parameter sum {PARAM_SUM}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
