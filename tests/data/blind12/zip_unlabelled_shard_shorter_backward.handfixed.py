# verify: ok
"""Hand-fixed: the unlabelled loader is prepared too, so both loaders of the `zip` have the same
length on every process.

Modelled on https://github.com/mosaicml/composer/issues/3415 (DDP needs dataloaders of the same
length on every rank; a rank-dependent length hangs) and the `zip` of labelled and unlabelled
loaders discussed in https://github.com/LiheYoung/UniMatch/issues/120 (`zip` ends as soon as one
iterator is exhausted). The labelled loader is prepared (4 batches on each process); the 7
unlabelled rows are dealt out `POOL[process_index::num_processes]` in batches of 1, 4 on process 0
and 3 on process 1, so `zip` stops one step earlier on process 1 and process 0's fourth
`accelerator.backward` (the DDP gradient all-reduce) has no partner.
"""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

LABELLED_X = torch.randn(16, 4, generator=torch.Generator().manual_seed(0))
POOL = torch.randn(7, 4, generator=torch.Generator().manual_seed(1))


def consistency(model, u):
    noisy = u + 0.1 * torch.randn_like(u)
    return torch.nn.functional.mse_loss(model(noisy), model(u).detach())


def main():
    accelerator = Accelerator()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    labelled = DataLoader(TensorDataset(LABELLED_X, LABELLED_X.sum(dim=1, keepdim=True)), batch_size=2)
    unlabelled = DataLoader(TensorDataset(POOL), batch_size=1)
    # both loaders split by accelerate: even batch counts (the last one padded) on every process
    model, optimizer, labelled, unlabelled = accelerator.prepare(model, optimizer, labelled, unlabelled)

    for step, ((x, y), (u,)) in enumerate(zip(labelled, unlabelled)):
        loss = torch.nn.functional.mse_loss(model(x), y) + 0.5 * consistency(model, u)
        optimizer.zero_grad()
        accelerator.backward(loss)
        optimizer.step()
    accelerator.print(f"{step + 1} semi-supervised steps")
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
