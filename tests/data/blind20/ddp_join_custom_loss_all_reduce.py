# verify: hang
"""A per-step loss all-reduce inside DDP's `join()` context, with uneven per-rank shards.

Modelled on https://github.com/Lightning-AI/pytorch-lightning/issues/3325 (supporting uneven
DDP inputs with `model.join`, where the maintainers note that synced logging and "arbitrary
syncing calls" of the user inside each step are the trouble) and the warning of
https://github.com/pytorch/pytorch/pull/42577: `join()` shadows DDP's own collectives for a
process that has run out of data, not the collectives the training loop adds itself.
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

SHARD_ROWS = {0: 40, 1: 24}  # each rank's own file; batches of 8: 5 and 3


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(rank)
    rows = SHARD_ROWS[rank]
    x = torch.randn(rows, 4)
    y = x.sum(dim=1, keepdim=True)
    batches = list(zip(x.split(8), y.split(8)))

    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    history = []
    with model.join():
        for xb, yb in batches:
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
            stats = torch.stack([loss.detach() * len(xb), torch.tensor(float(len(xb)))])
            dist.all_reduce(stats)  # expect: BCL005
            history.append((stats[0] / stats[1]).item())
    print(f"rank {rank}: {len(history)} steps, last global loss {history[-1]:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
