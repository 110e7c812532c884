# verify: hang
"""A progress all-reduce every LOG_EVERY scored batches, counted after skipping unlabelled ones.

Modelled on https://github.com/lifeiteng/vall-e/pull/93 (one rank reached its periodic validation
and its `tot_loss.reduce(...)` while the others were still training) and
https://github.com/LBANN/lbann/issues/115 (the ranks' step counters drifted apart and they stopped
in different all-reduces). Fabric's distributed sampler deals the rows out alternately; rows 1 and
3 carry no label, so process 1's first batch is skipped and its `scored` counter runs one batch
behind process 0's: process 0 all-reduces after its 2nd and 4th scored batch, process 1 only after
its 2nd, and the final all-reduce of process 1 meets process 0's periodic one.
"""
import torch
from lightning.fabric import Fabric
from torch.utils.data import DataLoader, TensorDataset

IGNORE = -100
LOG_EVERY = 2


def rows(n=16):
    x = torch.randn(n, 4, generator=torch.Generator().manual_seed(0))
    y = torch.arange(n) % 3
    y[[1, 3]] = IGNORE  # not annotated
    return TensorDataset(x, y)


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3).eval()
    loader = fabric.setup_dataloaders(DataLoader(rows(), batch_size=2))

    totals = torch.zeros(2)  # summed negative log-likelihood, labelled rows
    scored = 0
    with torch.no_grad():
        for x, y in loader:
            keep = y != IGNORE
            if not keep.any():
                continue
            nll = torch.nn.functional.cross_entropy(model(x[keep]), y[keep], reduction="sum")
            totals += torch.stack([nll, keep.sum().float()])
            scored += 1
            if scored % LOG_EVERY == 0:
                running = fabric.all_reduce(totals, reduce_op="sum")  # expect: BCL005
                fabric.print(f"after {scored} batches: nll {running[0] / running[1]:.3f}")
    final = fabric.all_reduce(totals, reduce_op="sum")
    fabric.print(f"final nll {final[0] / final[1]:.3f} over {int(final[1])} rows")


if __name__ == "__main__":
    main()
