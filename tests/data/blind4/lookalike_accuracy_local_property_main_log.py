# verify: ok
"""Look-alike of accuracy_property_main_log.py: the property read on the main process is local.

The main process's log line reads a property of the meter under `if
accelerator.is_main_process:`, as in the broken program, but `local_accuracy` only divides two
counters of this process. The reducing `accuracy` is read once, after training, on every
process.
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
    def local_accuracy(self) -> float:
        return self.correct / max(self.seen, 1)

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
            print(f"epoch {epoch}: accuracy on process 0's shard {meter.local_accuracy:.3f}")
    final = meter.accuracy
    if accelerator.is_main_process:
        print(f"final accuracy {final:.3f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
