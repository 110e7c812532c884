# verify: hang,error
"""Validation loop that drops a NaN batch before `gather_for_metrics` (accelerate).

Modelled on https://github.com/PrimeIntellect-ai/prime-rl/pull/1850: an SFT validation loop that
has to cope with batches whose loss is NaN. Here the loop skips such a batch with `continue`
before `accelerator.gather_for_metrics(...)`, so the process whose shard holds the corrupt target
(row 5, in process 0's second batch) gathers three times and the other process four times: the
other process waits in its last gather (or sees the first one leave).
"""
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def build_eval_set():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 4, generator=g)
    y = x.sum(dim=1, keepdim=True)
    y[5] = float("nan")  # one corrupt target in the validation file
    return TensorDataset(x, y)


def evaluate(accelerator, model, loader):
    model.eval()
    errors = []
    for x, y in loader:
        with torch.no_grad():
            pred = model(x)
        loss = F.mse_loss(pred, y)
        if torch.isnan(loss):
            print(f"process {accelerator.process_index}: NaN validation loss, batch skipped")
            continue
        pred, y = accelerator.gather_for_metrics((pred, y))  # expect: BCL005
        errors.append((pred - y).pow(2))
    return torch.cat(errors).mean().item()


def main():
    accelerator = Accelerator()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    loader = DataLoader(build_eval_set(), batch_size=2, shuffle=False)
    model, loader = accelerator.prepare(model, loader)
    mse = evaluate(accelerator, model, loader)
    accelerator.print(f"validation mse {mse:.4f}")
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
