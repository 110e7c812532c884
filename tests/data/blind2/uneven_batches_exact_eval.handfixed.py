# verify: ok
"""Turn off `even_batches` for exact metrics, then reduce the loss every eval batch.

Modelled on https://github.com/huggingface/accelerate/pull/776 ("`even_batches` [...] can be set to
`False`, in which case each process will see a different number of batches") and
https://github.com/huggingface/accelerate/issues/2258 (a process whose epoch ends early leaves the
others hanging). The setting comes from the run's config, far from the loop that reduces.
"""
from dataclasses import dataclass

import torch
from accelerate import Accelerator, DataLoaderConfiguration
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class RunConfig:
    eval_batch_size: int = 2
    exact_eval: bool = True  # no duplicated samples in the metrics


def build_accelerator(cfg: RunConfig) -> Accelerator:
    return Accelerator(dataloader_config=DataLoaderConfiguration(even_batches=not cfg.exact_eval))


class Evaluator:
    def __init__(self, accelerator, model, loader):
        self.accelerator = accelerator
        self.model = model
        self.loader = loader

    @torch.no_grad()
    def run(self):
        # local sums over however many batches this process has; one reduce after the loop
        totals = torch.zeros(2)
        for x, y in self.loader:
            loss = torch.nn.functional.mse_loss(self.model(x), y, reduction="sum")
            totals += torch.stack([loss, torch.tensor(float(len(y)))])
        totals = self.accelerator.reduce(totals, reduction="sum")
        return (totals[0] / totals[1]).item()


def main():
    cfg = RunConfig()
    accelerator = build_accelerator(cfg)
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(5, 3), torch.randn(5, 1))
    model, loader = accelerator.prepare(torch.nn.Linear(3, 1), DataLoader(data, batch_size=cfg.eval_batch_size))
    val = Evaluator(accelerator, model, loader).run()
    accelerator.print(f"val loss {val:.4f}")


if __name__ == "__main__":
    main()
