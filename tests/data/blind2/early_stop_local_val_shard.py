# verify: hang
"""Early stopping on each process's own validation loss, never reduced across processes.

Modelled on https://github.com/speechbrain/speechbrain/pull/2051 (the early stopper "stops on the
main process but not the other processes" in DDP) and
https://github.com/facebookresearch/pytext/pull/585 (workers that "think there has been no
improvement and terminate early, leaving worker 0 stuck"). Here every process measures, but on its
own shard of the validation set.
"""
import torch
from accelerate import Accelerator

TRAIN_X = torch.linspace(0.5, 2.0, 8)
VAL = [(x, 2.0 * x) for x in (0.5, 1.0, 1.5)] + [(x, 1.0 * x) for x in (0.8, 1.2, 1.6)]


class EarlyStopper:
    def __init__(self, patience=2):
        self.patience = patience
        self.best = float("inf")
        self.bad_epochs = 0

    def should_stop(self, metric: float) -> bool:
        if metric < self.best:
            self.best, self.bad_epochs = metric, 0
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience


def train_epoch(accelerator, w, lr=0.15):
    loss = ((w * TRAIN_X - 2.0 * TRAIN_X) ** 2).mean()
    loss.backward()
    w.grad = accelerator.reduce(w.grad, reduction="mean")
    with torch.no_grad():
        w -= lr * w.grad
    w.grad = None


def validate(w, shard):
    with torch.no_grad():
        return sum(float((w * x - y) ** 2) for x, y in shard) / len(shard)


def main():
    accelerator = Accelerator()
    w = torch.zeros((), requires_grad=True)
    stopper = EarlyStopper()
    with accelerator.split_between_processes(VAL) as shard:
        val_shard = list(shard)
    for epoch in range(8):
        train_epoch(accelerator, w)  # expect: BCL005
        if stopper.should_stop(validate(w, val_shard)):
            print(f"process {accelerator.process_index} stops after epoch {epoch}", flush=True)
            break
    accelerator.wait_for_everyone()
    accelerator.print(f"w = {w.item():.3f}")


if __name__ == "__main__":
    main()
