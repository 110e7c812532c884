# verify: ok
"""Hand fix: the discriminator's loop condition reads the loss averaged over the processes.

Modelled on soumith/ganhacks#23 (https://github.com/soumith/ganhacks/issues/23), "while lossD
> A: train D; while lossG > B: train G", and on facebookresearch/maskrcnn-benchmark#619
(https://github.com/facebookresearch/maskrcnn-benchmark/issues/619): `if loss != 0:
loss.backward()` under DistributedDataParallel stops when the loss is 0 on one GPU only.

Each process sees its own real batches (Fabric's distributed sampler). The discriminator gets
extra steps while its loss on this process's batch is above `D_LOSS_TARGET` (at most
`MAX_D_STEPS`). The real rows are not alike: the ones dealt to process 1 lie far from what the
generator makes, so its discriminator loss falls below the target sooner and the processes run
different numbers of discriminator backwards (each a DDP all-reduce of D's gradients) before
the generator's backward.

Here the loop's test is the discriminator loss averaged over the processes
(`fabric.all_reduce(..., reduce_op="mean")`, run by every process at every test), so all
processes take the same number of discriminator steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import lightning as L
from torch.utils.data import DataLoader, TensorDataset

D_LOSS_TARGET = 1.2
MAX_D_STEPS = 4
ROWS = 32


def real_rows():
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(ROWS, 4, generator=gen) * 0.3
    x[1::2] += 3.0  # every other row is an easy "real" example
    return x


def d_loss_fn(D, real, fake):
    ones, zeros = torch.ones(len(real), 1), torch.zeros(len(fake), 1)
    return F.binary_cross_entropy_with_logits(D(real), ones) + F.binary_cross_entropy_with_logits(D(fake), zeros)


def global_mean(fabric, loss):
    return fabric.all_reduce(loss.detach(), reduce_op="mean").item()


def main():
    fabric = L.Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    fabric.seed_everything(0)
    G = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 4))
    D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
    opt_d = torch.optim.SGD(D.parameters(), lr=0.05)
    G, opt_g = fabric.setup(G, opt_g)
    D, opt_d = fabric.setup(D, opt_d)
    loader = fabric.setup_dataloaders(DataLoader(TensorDataset(real_rows()), batch_size=4))

    for (real,) in loader:
        fake = G(torch.randn(len(real), 2))
        d_loss = d_loss_fn(D, real, fake.detach())
        d_steps = 0
        while global_mean(fabric, d_loss) > D_LOSS_TARGET and d_steps < MAX_D_STEPS:
            opt_d.zero_grad()
            fabric.backward(d_loss)
            opt_d.step()
            d_steps += 1
            d_loss = d_loss_fn(D, real, fake.detach())
        g_loss = F.binary_cross_entropy_with_logits(D(fake), torch.ones(len(real), 1))
        opt_g.zero_grad()
        fabric.backward(g_loss)
        opt_g.step()
        print(f"[rank {fabric.global_rank}] d_steps={d_steps} d_loss={d_loss.item():.3f}")
    fabric.barrier()


if __name__ == "__main__":
    main()
