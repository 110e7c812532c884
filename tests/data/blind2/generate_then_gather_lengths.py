# verify: error
"""Gather generated token ids whose length depends on where each prompt hits end-of-sequence.

Modelled on https://github.com/huggingface/accelerate/issues/1326 ("Stuck when using
model.generate() and acclerator.gather() in the distributed setting") and
https://github.com/huggingface/accelerate/pull/19 ("predictions of different sizes across processes
[...] can't be gathered (the script will hang)", the reason for `pad_across_processes`).
"""
import torch
from accelerate import Accelerator

EOS = 0
PROMPTS = [[5, 3, 2], [7, 1], [4, 4, 4, 1], [9, 2, 6]]


class ToyLM:
    """Greedy decoder: next token = (sum of the context) mod 7, stopping at EOS."""

    def generate(self, prompt_ids: torch.Tensor, max_new_tokens: int = 8) -> torch.Tensor:
        out = prompt_ids.tolist()
        for _ in range(max_new_tokens):
            nxt = sum(out) % 7
            out.append(nxt)
            if nxt == EOS:
                break
        return torch.tensor(out)


def main():
    accelerator = Accelerator()
    lm = ToyLM()
    with accelerator.split_between_processes(PROMPTS) as mine:
        generations = [lm.generate(torch.tensor(p)) for p in mine]
    for seq in generations:
        gathered = accelerator.gather(seq)  # expect: BCL015
        accelerator.print(gathered.tolist())


if __name__ == "__main__":
    main()
