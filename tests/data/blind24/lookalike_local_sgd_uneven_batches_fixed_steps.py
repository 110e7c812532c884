# verify: ok
"""Look-alike: `LocalSGD` over the same `even_batches=False` loader, but the loop counts steps.

Process 0 holds 4 batches and process 1 holds 3, as in the broken program, but training runs
`MAX_STEPS` steps drawn from `itertools.cycle` of this process's own loader, so both processes call
`local_sgd.step()` 6 times and average at steps 2, 4 and 6 and on leaving the block.
"""
import itertools

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from accelerate import Accelerator, DataLoaderConfiguration
from accelerate.local_sgd import LocalSGD

LOCAL_SGD_STEPS = 2
MAX_STEPS = 6


def main():
    accelerator = Accelerator(cpu=True, dataloader_config=DataLoaderConfiguration(even_batches=False))
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(14, 5, generator=g)
    y = x.sum(dim=1, keepdim=True)
    loader = DataLoader(TensorDataset(x, y), batch_size=2)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    with LocalSGD(accelerator=accelerator, model=model, local_sgd_steps=LOCAL_SGD_STEPS) as local_sgd:
        for xb, yb in itertools.islice(itertools.cycle(loader), MAX_STEPS):
            loss = nn.functional.mse_loss(model(xb), yb)
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            local_sgd.step()

    accelerator.wait_for_everyone()
    weight_sum = sum(p.detach().sum().item() for p in model.parameters())
    accelerator.print(f"parameter sum after local SGD: {weight_sum:.5f}")


if __name__ == "__main__":
    main()
