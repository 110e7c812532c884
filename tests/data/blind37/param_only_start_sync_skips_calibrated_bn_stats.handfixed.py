# verify: ok check=RUNNING_MEAN
"""Hand fix: the start-up sync walks `state_dict().values()`, so the recalibrated running statistics
(buffers) are broadcast from rank 0 with the parameters.

The broken version: hand-rolled data parallelism whose start-up sync walks `parameters()`, not the state dict.

Modelled on pytorch/rl#995 (https://github.com/pytorch/rl/issues/995): weights copied to the other
workers through `named_parameters()` leave out the buffers, such as a batch norm's running statistics.

Here the model's batch norm is first recalibrated to the target domain: a few forward passes in
training mode over this process's own rows, so each process ends with the statistics of its shard
(process 1's rows come from a shifted part of the domain). Then the start-up sync broadcasts every
parameter from rank 0, and fine-tuning runs with the batch norm frozen (eval mode) and gradients
averaged by hand. The running statistics were never sent: each process normalises with its own.
"""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

RUNNING_MEAN = None


def make_rows(rank, world):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 6, generator=g)
    x[32:] += 2.0  # the second half of the domain is shifted
    y = x.sum(dim=1, keepdim=True)
    per = len(x) // world
    return x[rank * per:(rank + 1) * per], y[rank * per:(rank + 1) * per]


def build_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))


def recalibrate_norm(model, x):
    model.train()
    with torch.no_grad():
        for chunk in x.split(8):
            model(chunk)


def sync_start(model):
    for t in model.state_dict().values():
        dist.broadcast(t, src=0)


def main():
    global RUNNING_MEAN
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    x, y = make_rows(rank, world)
    model = build_model()
    recalibrate_norm(model, x)
    sync_start(model)

    model.eval()  # frozen batch norm while fine-tuning
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for xb, yb in zip(x.split(8), y.split(8)):
        loss = F.mse_loss(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world
        opt.step()
    RUNNING_MEAN = [round(v, 3) for v in model[1].running_mean.tolist()]
    print(f"rank {rank}: running mean[:4] {RUNNING_MEAN[:4]}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
