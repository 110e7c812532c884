# verify: ok
"""Every process runs the periodic evaluation (its gather included); only the print depends on
`should_log`."""
from dataclasses import dataclass

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class RunConfig:
    eval_every: int = 2
    report_to: str = "tensorboard"
    should_log: bool = False


class Loop:
    def __init__(self, accelerator, cfg):
        self.accelerator = accelerator
        self.cfg = cfg
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 3)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        data = TensorDataset(torch.randn(16, 4), torch.randint(0, 3, (16,)))
        self.model, self.opt, self.train_dl, self.eval_dl = accelerator.prepare(
            model, opt, DataLoader(data, batch_size=4), DataLoader(data, batch_size=4)
        )

    def evaluate(self):
        correct = total = 0
        with torch.no_grad():
            for x, y in self.eval_dl:
                preds = self.model(x).argmax(-1)
                preds, y = self.accelerator.gather_for_metrics((preds, y))
                correct += (preds == y).sum().item()
                total += y.numel()
        return correct / total

    def run(self):
        for step, (x, y) in enumerate(self.train_dl):
            self.opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(self.model(x), y)
            self.accelerator.backward(loss)
            self.opt.step()
            if step % self.cfg.eval_every == 0:
                accuracy = self.evaluate()
                if self.cfg.should_log:
                    print(f"step {step}: accuracy {accuracy:.2f}")


def main():
    accelerator = Accelerator()
    cfg = RunConfig()
    cfg.should_log = accelerator.is_main_process and cfg.report_to != "none"
    Loop(accelerator, cfg).run()
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
