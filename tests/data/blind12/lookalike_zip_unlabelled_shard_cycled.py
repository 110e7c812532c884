# verify: ok
"""Look-alike: `zip(labelled, cycle(unlabelled))` over an unlabelled pool still split by hand.

Resembles https://github.com/mosaicml/composer/issues/3415 (rank-dependent loader lengths hang
DDP) and https://github.com/LiheYoung/UniMatch/issues/120 (`zip` stops at the shorter iterator).
The 7 unlabelled rows are still dealt out 4 and 3, but the unlabelled loader is wrapped in
`itertools.cycle`, so `zip` always stops with the prepared labelled loader: 4 steps, and 4
`accelerator.backward` calls, on every process.
"""
import itertools

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
    model, optimizer, labelled = accelerator.prepare(model, optimizer, labelled)
    share = POOL[accelerator.process_index :: accelerator.num_processes]
    unlabelled = DataLoader(TensorDataset(share), batch_size=1)

    for step, ((x, y), (u,)) in enumerate(zip(labelled, itertools.cycle(unlabelled))):
        loss = torch.nn.functional.mse_loss(model(x), y) + 0.5 * consistency(model, u)
        optimizer.zero_grad()
        accelerator.backward(loss)
        optimizer.step()
    accelerator.print(f"{step + 1} semi-supervised steps")
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
