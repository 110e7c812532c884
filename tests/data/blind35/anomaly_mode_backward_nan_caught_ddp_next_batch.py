# verify: hang,error
"""Anomaly mode turns a NaN in one process's backward into an exception that the loop catches.

Modelled on https://github.com/k2-fsa/icefall/pull/8 (catching errors raised inside `.backward()`
under DDP: DDP's gradient reduction runs during the backward, so an error there cannot simply be
caught and skipped): the loop runs the backward under `torch.autograd.detect_anomaly()`, and on
`RuntimeError` logs the batch, zeroes the gradients and goes on to the next batch. A NaN label in
one process's shard makes anomaly mode raise in that process's backward before any gradient hook
has fired, so that process never joins the DDP gradient all-reduce the other process waits in.
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
        try:
            with torch.autograd.detect_anomaly():
                loss.backward()  # expect: BCL011
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
