# verify: ok
"""`draw()` returns a placeholder of the same shape and dtype on the other processes, which the
broadcast fills with the main process's subset."""
import torch
from accelerate import Accelerator
from accelerate.utils import broadcast


class SubsetSampler:
    def __init__(self, accelerator, n, k):
        self.accelerator = accelerator
        self.n, self.k = n, k

    def draw(self):
        if not self.accelerator.is_main_process:
            return torch.zeros(self.k, dtype=torch.int64, device=self.accelerator.device)
        return torch.randperm(self.n)[: self.k].to(self.accelerator.device)


def main():
    accelerator = Accelerator()
    sampler = SubsetSampler(accelerator, n=100, k=8)
    ids = broadcast(sampler.draw())
    print(f"process {accelerator.process_index}: {ids.tolist()}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
