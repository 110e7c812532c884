# verify: error
"""A sampler object draws the evaluation subset on the main process and shares it with
accelerate's `broadcast`. Its `draw()` method returns `None` on the other processes (it returns
early there), so they hand `None` to `broadcast`, which raises on them.

Modelled on pytorch/ignite#1839 "Added `safe_mode` for Idist broadcast"
(https://github.com/pytorch/ignite/pull/1839): "only one process holds a valid tensor and others
have none", and the broadcast had to be taught to build the placeholder itself.
"""
import torch
from accelerate import Accelerator
from accelerate.utils import broadcast


class SubsetSampler:
    def __init__(self, accelerator, n, k):
        self.accelerator = accelerator
        self.n, self.k = n, k

    def draw(self):
        if not self.accelerator.is_main_process:
            return None
        return torch.randperm(self.n)[: self.k].to(self.accelerator.device)


def main():
    accelerator = Accelerator()
    sampler = SubsetSampler(accelerator, n=100, k=8)
    ids = broadcast(sampler.draw())  # expect: BCL001
    print(f"process {accelerator.process_index}: {ids.tolist()}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
