# verify: ok
"""Loss-spike recovery: a helper reloads the last good checkpoint with `fabric.load` when this
process's loss jumps above ten times its moving average. The loss is each process's own, so only
the process that drew the bad record reloads (and `fabric.load` ends in a barrier) while the other
goes on to its backward.

Hand fix: the spike flag is all-reduced (max), so every process rolls back on the same step.

Modelled on facebookresearch/metaseq#521 (https://github.com/facebookresearch/metaseq/pull/521),
"Automatically detect and skip loss spikes", where a spike test on the local loss made "each gpu
worker skip a different number of batches".
"""
import os
import shutil
import tempfile

import torch
import torch.nn.functional as F
from lightning.fabric import Fabric

STEPS = 6
SEED = 20
SPIKE = 10.0
RUN_DIR = os.path.join(
    tempfile.gettempdir(),
    f"blind43-{os.environ.get('MASTER_ADDR', 'local')}-{os.environ.get('MASTER_PORT', '0')}-rollback",
)


def load_shard(seed):
    g = torch.Generator().manual_seed(seed)
    bad = torch.rand(STEPS, generator=g) < 0.2  # records from a sensor that skipped normalisation
    x = torch.randn(STEPS, 16, 8, generator=g)
    y = x.sum(-1, keepdim=True)
    x[bad] *= 1e6
    return x, y


def rollback_if_spiking(fabric, state, loss, ema, ckpt):
    spiking = torch.tensor(float(ema is not None and loss > SPIKE * ema))
    if fabric.all_reduce(spiking, reduce_op="max").item() > 0:  # a spike anywhere rolls back everywhere
        fabric.load(ckpt, state)
        return True
    return False


def main():
    fabric = Fabric(accelerator="cpu", strategy="ddp", devices=int(os.environ["WORLD_SIZE"]))
    fabric.launch()
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model, opt = fabric.setup(model, opt)
    os.makedirs(RUN_DIR, exist_ok=True)
    ckpt = os.path.join(RUN_DIR, "last-good.ckpt")
    state = {"model": model, "optimizer": opt}
    fabric.save(ckpt, state)
    xs, ys = load_shard(SEED + fabric.global_rank)
    ema = None
    for step in range(STEPS):
        loss = F.mse_loss(model(xs[step]), ys[step])
        if rollback_if_spiking(fabric, state, loss.item(), ema, ckpt):
            print(f"step {step}: loss {loss.item():.3g} spiked, rolled back")
            continue
        fabric.backward(loss)
        opt.step()
        opt.zero_grad()
        ema = loss.item() if ema is None else 0.9 * ema + 0.1 * loss.item()
    fabric.barrier()
    shutil.rmtree(RUN_DIR, ignore_errors=True)


if __name__ == "__main__":
    main()
