# verify: ok
"""Look-alike of generation_pad_skipped_at_max_len.py: correct.

The same test on the batch's own length guards the padding, but the padding is local: a batch
shorter than `MAX_NEW_TOKENS` is padded to that fixed cap with `F.pad`, so every process gathers
ids of the same width without asking the others for theirs.
"""
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader

MAX_NEW_TOKENS = 6
EOS, PAD = 0, -1
PROMPTS = [[0, 1, 0], [1, 1, 2], [0, 2, 0], [0, 0, 0], [3, 2, 2], [1, 0, 0], [2, 2, 2], [1, 1, 0]]


class ToyDecoder(torch.nn.Module):
    def generate(self, prompts):
        state, done, out = prompts.sum(dim=1), torch.zeros(len(prompts), dtype=torch.bool), []
        for _ in range(MAX_NEW_TOKENS):
            state = (state * 3 + 1) % 11
            token = torch.where(done, torch.full_like(state, EOS), state)
            out.append(token)
            done |= token == EOS
            if done.all():
                break
        return torch.stack(out, dim=1)


def collect(accelerator, tokens):
    if tokens.shape[1] < MAX_NEW_TOKENS:
        tokens = F.pad(tokens, (0, MAX_NEW_TOKENS - tokens.shape[1]), value=PAD)
    return accelerator.gather_for_metrics(tokens)


def main():
    accelerator = Accelerator()
    decoder = ToyDecoder()
    loader = accelerator.prepare(DataLoader(torch.tensor(PROMPTS), batch_size=2))
    finished = 0
    for batch in loader:
        generated = collect(accelerator, decoder.generate(batch))
        finished += int(((generated == EOS).any(dim=1)).sum())
        accelerator.print(f"gathered {tuple(generated.shape)} ids")
    accelerator.print(f"{finished} of {len(PROMPTS)} generations ended with EOS")
    accelerator.end_training()


if __name__ == "__main__":
    main()
