# verify: hang,error
"""A user's local-SGD wrapper averages the parameters every `period` forward calls, counted per process.

Modelled on https://github.com/Bluefog-Lib/bluefog/pull/54: the communication was tied to a
counter decremented in forward hooks, and a process that ran more forward passes than expected
before `step()` fell out of step with the others.

`PeriodicAverage` wraps the model and all-reduces every parameter on each `period`-th call to
`forward`. Training takes one optimizer step per session, but a session longer than `MAX_ROWS`
is run in chunks (one forward each, gradients accumulated). Process 1's shard holds two long
sessions, so it calls `forward` six times against process 0's four and averages three times
against two: its third average waits in an all-reduce that process 0 never makes.
"""
import torch
import torch.distributed as dist
from torch import nn

MAX_ROWS = 4
SESSION_ROWS = [4, 4, 4, 8, 4, 4, 4, 8]  # dealt out round-robin: process r gets [r::world]


class PeriodicAverage(nn.Module):
    def __init__(self, module, period):
        super().__init__()
        self.module, self.period, self.calls = module, period, 0

    def forward(self, x):
        self.calls += 1
        if self.calls % self.period == 0:
            self.average()
        return self.module(x)

    @torch.no_grad()
    def average(self):
        for p in self.module.parameters():
            dist.all_reduce(p)  # expect: BCL005
            p /= dist.get_world_size()


def sessions(rank, world):
    g = torch.Generator().manual_seed(rank)
    out = []
    for n in SESSION_ROWS[rank::world]:
        x = torch.randn(n, 5, generator=g)
        out.append((x, x.sum(1, keepdim=True)))
    return out


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = PeriodicAverage(nn.Linear(5, 1), period=2)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for x, y in sessions(dist.get_rank(), dist.get_world_size()):
        opt.zero_grad()
        for xc, yc in zip(x.split(MAX_ROWS), y.split(MAX_ROWS)):
            loss = nn.functional.mse_loss(model(xc), yc) * len(xc) / len(x)
            loss.backward()
        opt.step()
    dist.barrier()
    print(f"[process {dist.get_rank()}] weight {model.module.weight.data.flatten().tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
