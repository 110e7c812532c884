# verify: hang,error
"""A ZeRO optimizer consolidated for a "best" checkpoint judged by this process's own epoch loss.

Modelled on https://github.com/facebookresearch/fairscale/issues/116 (checkpointing the full
sharded optimizer state requires calling `consolidate_state()` on every rank first, which is not
intuitive): the loop keeps the best epoch training loss and, when it improves, consolidates the
`ZeroRedundancyOptimizer` state onto rank 0 and saves it there. The loss compared is each
process's own epoch mean; the noisy rows (every odd row, noise growing with the epoch) all sit in
process 1's shard, so in the second epoch only process 0 sees an improvement and enters the
consolidation's broadcasts alone.
"""
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP

EPOCHS = 3
ROWS = 16


def epoch_rows(epoch, rank, world):
    g = torch.Generator().manual_seed(11)
    x = torch.randn(ROWS, 4, generator=g)
    y = x @ torch.tensor([[0.5], [1.0], [-1.0], [0.25]])
    noise = torch.randn(ROWS, 1, generator=torch.Generator().manual_seed(20 + epoch))
    y[1::2] += noise[1::2] * 3.0 * epoch  # augmentation noise on the odd rows grows per epoch
    return x[rank::world].split(4), y[rank::world].split(4)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    run_dir = os.path.join(
        tempfile.gettempdir(),
        f"blind35-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-ckpt",
    )
    os.makedirs(run_dir, exist_ok=True)
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1))
    opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.SGD, lr=0.1)
    best = float("inf")
    for epoch in range(EPOCHS):
        xs, ys = epoch_rows(epoch, rank, world)
        total = 0.0
        for x, y in zip(xs, ys):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            total += loss.item()
        epoch_loss = total / len(xs)
        print(f"epoch {epoch}: loss {epoch_loss:.3f}")
        if epoch_loss < best:
            best = epoch_loss
            opt.consolidate_state_dict(to=0)  # expect: BCL011
            if dist.get_rank() == 0:
                torch.save({"model": model.module.state_dict(), "optim": opt.state_dict()},
                           os.path.join(run_dir, "best.pt"))
    dist.barrier()
    shutil.rmtree(run_dir, ignore_errors=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
