# verify: ok
"""Hand fix: the schedule is sized from the number of batches, which accelerate makes equal on
every process; the token count is no longer used for it.

Size a OneCycleLR schedule from this process's own token count.

Modelled on https://github.com/chengtan9907/OpenSTL/pull/184 ("Corrected OneCycleLR scheduler
step calculation ... prevents scheduler step limit errors in distributed training"): OneCycleLR
raises `ValueError: Tried to step N times. The specified number of total steps is M` once it is
stepped past `total_steps`.

The training set is sized in tokens: each process counts the real (unpadded) tokens of the
batches accelerate hands it and derives the number of optimizer steps from a token budget per
step. Accelerate shards the batches alternately, and the long sequences sit in the even batches,
so the two processes count different totals and build schedules of 8 and 4 steps, while both run
8 steps. The process with the short schedule raises in `scheduler.step()` at its fifth step; the
other waits in the next backward's all-reduce.
"""
import torch
from accelerate import Accelerator
from torch.optim.lr_scheduler import OneCycleLR
from torch.utils.data import DataLoader, TensorDataset

EPOCHS, BATCH, SEQ = 2, 4, 10


def dataset():
    g = torch.Generator().manual_seed(0)
    rows = 32
    # batch k holds rows 4k..4k+3; even batches are full-length, odd ones are 4 tokens long
    lengths = torch.tensor([SEQ if (i // BATCH) % 2 == 0 else 4 for i in range(rows)])
    mask = (torch.arange(SEQ)[None, :] < lengths[:, None]).float()
    x = torch.randn(rows, SEQ, 3, generator=g) * mask[..., None]
    y = x.sum(dim=(1, 2)).unsqueeze(1)
    return TensorDataset(x, mask, y)


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    sgd = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(dataset(), batch_size=BATCH, shuffle=False)
    model, optimizer, loader = accelerator.prepare(model, sgd, loader)

    steps_per_epoch = len(loader)
    scheduler = OneCycleLR(sgd, max_lr=0.05, total_steps=EPOCHS * steps_per_epoch)

    for epoch in range(EPOCHS):
        for x, mask, y in loader:
            pred = (model(x).squeeze(-1) * mask).sum(dim=1, keepdim=True)
            loss = torch.nn.functional.mse_loss(pred, y)
            accelerator.backward(loss)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
    accelerator.print(f"final lr {scheduler.get_last_lr()[0]:.5f}")
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
