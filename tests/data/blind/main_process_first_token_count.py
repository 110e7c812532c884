# verify: hang
"""A data module builds its vocabulary under `accelerator.main_process_first()` (so the main
process fills the cache and the others read it), and in the same block counts the corpus tokens
over all processes with `accelerator.reduce` through a private method. The main process reaches
the reduce while the others still wait at the context manager's barrier.

Modelled on huggingface/accelerate#1304 "Fix nested context manager for main_process_first()"
(https://github.com/huggingface/accelerate/pull/1304) and #1303: the test script gathered inside
`with accelerator.main_process_first():`, and the reviewers moved the collective out.
"""
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
            self.total_tokens = self._count_tokens()  # expect: BCL005


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
