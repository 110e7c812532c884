# verify: hang
"""An accuracy property that reduces across processes, read only by the main process's log line.

Modelled on Lightning-AI/pytorch-lightning#18148
(https://github.com/Lightning-AI/pytorch-lightning/issues/18148): reading the property
`trainer.log_dir` (it broadcasts) in a `rank_zero_only` hook froze DDP training; the fix
documented that it must be read on all processes
(https://github.com/Lightning-AI/pytorch-lightning/pull/18179).

`EpochMeter.accuracy` looks like an attribute but calls `accelerator.reduce`. The epoch's log
line reads it under `if accelerator.is_main_process:`, so process 0 reduces while process 1
goes on to the next epoch's `wait_for_everyone()`.
"""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


class EpochMeter:
    def __init__(self, accelerator: Accelerator):
        self.accelerator = accelerator
        self.reset()

    def reset(self) -> None:
        self.correct, self.seen = 0, 0

    def update(self, logits: torch.Tensor, labels: torch.Tensor) -> None:
        self.correct += int((logits.argmax(dim=1) == labels).sum())
        self.seen += len(labels)

    @property
    def accuracy(self) -> float:
        totals = torch.tensor([self.correct, self.seen], dtype=torch.float64)
        totals = self.accelerator.reduce(totals, reduction="sum")
        return (totals[0] / totals[1]).item()


def main() -> None:
    accelerator = Accelerator()
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(32, 4), torch.randint(0, 3, (32,)))
    model = torch.nn.Linear(4, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt, loader = accelerator.prepare(model, opt, DataLoader(data, batch_size=4))
    meter = EpochMeter(accelerator)
    for epoch in range(2):
        accelerator.wait_for_everyone()
        meter.reset()
        for x, y in loader:
            logits = model(x)
            loss = torch.nn.functional.cross_entropy(logits, y)
            accelerator.backward(loss)
            opt.step()
            opt.zero_grad()
            meter.update(logits.detach(), y)
        if accelerator.is_main_process:
            print(f"epoch {epoch}: accuracy {meter.accuracy:.3f}")  # expect: BCL005
    accelerator.end_training()


if __name__ == "__main__":
    main()
