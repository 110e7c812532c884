# verify: ok
"""Hand fix of anomaly_mode_backward_nan_caught_ddp_next_batch: a non-finite loss on any
process is agreed (all-reduce MAX) before the backward, and every process skips that batch's
backward together; anomaly mode stays on for anything else.
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

STEPS = 6


def shard(step, rank, world):
    g = torch.Generator().manual_seed(900 + step)
    x = torch.randn(10, 4, generator=g)
    y = torch.tanh(x[:, :1])
    if step == 3:
        y[6] = float("nan")  # a NaN label in row 6 of this global batch
    return x[rank::world], y[rank::world]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    bad = 0
    for step in range(STEPS):
        x, y = shard(step, rank, world)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        nonfinite = torch.tensor(float(not torch.isfinite(loss)))
        dist.all_reduce(nonfinite, op=dist.ReduceOp.MAX)
        if nonfinite.item() > 0:  # every process skips the backward together
            bad += 1
            print(f"step {step}: non-finite loss on some process, skipping batch")
            continue
        try:
            with torch.autograd.detect_anomaly():
                loss.backward()
        except RuntimeError as err:
            bad += 1
            print(f"step {step}: anomaly in backward, skipping batch ({str(err)[:50]})")
            opt.zero_grad()
            continue
        opt.step()
    print(f"rank {rank}: {bad} batches skipped")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
