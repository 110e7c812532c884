# verify: ok
"""The vocabulary is built under `main_process_first()`; the token count, a collective, runs
after the block, where every process reaches it."""
import torch
from accelerate import Accelerator


class TextDataModule:
    def __init__(self, accelerator, texts):
        self.accelerator = accelerator
        self.texts = texts
        self.vocab = None
        self.total_tokens = None

    def _count_tokens(self):
        local = torch.tensor([sum(len(t.split()) for t in self.texts)], device=self.accelerator.device)
        return self.accelerator.reduce(local, reduction="sum")

    def setup(self):
        with self.accelerator.main_process_first():
            words = sorted({w for t in self.texts for w in t.split()})
            self.vocab = {w: i for i, w in enumerate(words)}
        self.total_tokens = self._count_tokens()


def main():
    accelerator = Accelerator()
    shard = ["the cat sat", "on the mat"] if accelerator.process_index == 0 else ["a dog ran", "far away"]
    dm = TextDataModule(accelerator, shard)
    dm.setup()
    accelerator.print(f"vocab {len(dm.vocab)}, tokens {int(dm.total_tokens.item())}")
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
