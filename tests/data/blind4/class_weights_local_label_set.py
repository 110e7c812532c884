# verify: error
"""Class weights broadcast into a placeholder sized by the classes of this process's own share.

Modelled on IntelLabs/SAR#6 (https://github.com/IntelLabs/SAR/pull/6), where the review of
`n_classes = len(th.unique(labels))` asked to "make sure that the number of labels is the same
across all workers" (an all-reduce MAX), because each worker counted the labels it held.

`ClassBalancer` takes its class list from the labels of the process's
`split_between_processes` share. The main process scans the whole label column and computes
inverse-frequency weights for the four classes of its share; process 1's share has no
"sarcasm" label, so its placeholder has three elements, and the broadcast sends 16 bytes into 12.
"""
from collections import Counter

import torch
from accelerate import Accelerator
from accelerate.utils import broadcast

LABELS = ["joy", "anger", "joy", "sarcasm", "fear", "joy", "anger", "fear", "joy", "fear"]


class ClassBalancer:
    def __init__(self, accelerator: Accelerator, share: list[str]):
        self.accelerator = accelerator
        self.share = share
        self.classes = sorted(set(share))

    def weights(self, label_column: list[str]) -> torch.Tensor:
        if self.accelerator.is_main_process:
            counts = Counter(label_column)
            w = torch.tensor([len(label_column) / counts[c] for c in self.classes])
        else:
            w = torch.zeros(len(self.classes))  # expect: BCL007
        return broadcast(w)


def main() -> None:
    accelerator = Accelerator()
    with accelerator.split_between_processes(LABELS) as mine:
        balancer = ClassBalancer(accelerator, mine)
    weights = balancer.weights(LABELS)
    targets = torch.tensor([balancer.classes.index(c) for c in balancer.share])
    loss_fn = torch.nn.CrossEntropyLoss(weight=weights)
    logits = torch.zeros(len(targets), len(balancer.classes))
    loss = accelerator.reduce(loss_fn(logits, targets), reduction="mean")
    if accelerator.is_main_process:
        print(f"weights {weights.tolist()}, loss {loss.item():.3f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
