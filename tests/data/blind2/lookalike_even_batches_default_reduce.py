# verify: ok
"""Like `uneven_batches_exact_eval`, but with accelerate's default `even_batches=True`: the
dataloader pads the last batches so every process sees the same number, and a reduce per batch
is safe.
"""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


class Evaluator:
    def __init__(self, accelerator, model, loader):
        self.accelerator = accelerator
        self.model = model
        self.loader = loader

    @torch.no_grad()
    def run(self):
        losses = []
        for x, y in self.loader:
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            losses.append(self.accelerator.reduce(loss, reduction="mean"))
        return torch.stack(losses).mean().item()


def main():
    accelerator = Accelerator()
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(5, 3), torch.randn(5, 1))
    model, loader = accelerator.prepare(torch.nn.Linear(3, 1), DataLoader(data, batch_size=2))
    val = Evaluator(accelerator, model, loader).run()
    accelerator.print(f"val loss {val:.4f}")


if __name__ == "__main__":
    main()
