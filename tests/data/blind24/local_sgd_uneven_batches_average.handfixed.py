# verify: ok
"""Hand fix: the loader keeps Accelerate's default `even_batches=True`.

The 7 batches are dealt as 4 and 4 (the first row reused on process 1), so both processes call
`local_sgd.step()` equally often and average at the same points.

Modelled on intel/ipex-llm#3626 (https://github.com/intel/ipex-llm/pull/3626): training hung when
the workers held different numbers of batches, and DDP's `join()` was the fix; the averaging helper
here is Accelerate's `LocalSGD` (huggingface/accelerate#1378), which every `local_sgd_steps` calls
of `step()` runs `wait_for_everyone()` and one `accelerator.reduce` per parameter, and once more when
its `with` block ends. The script turns `even_batches` off so that no row is seen twice ("local SGD
does not synchronise every step anyway"): 14 rows in batches of 2 are dealt as 4 and 3 batches, so
process 0 averages at its steps 2 and 4 and again on leaving the block, process 1 at its step 2 and
on leaving; process 0's last average has no partner.
"""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from accelerate import Accelerator
from accelerate.local_sgd import LocalSGD

LOCAL_SGD_STEPS = 2


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(14, 5, generator=g)
    y = x.sum(dim=1, keepdim=True)
    loader = DataLoader(TensorDataset(x, y), batch_size=2)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

    with LocalSGD(accelerator=accelerator, model=model, local_sgd_steps=LOCAL_SGD_STEPS) as local_sgd:
        for xb, yb in loader:
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
