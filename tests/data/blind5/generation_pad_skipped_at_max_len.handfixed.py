# verify: ok
"""Hand-fixed twin of generation_pad_skipped_at_max_len.py.

Every process calls `pad_across_processes` for every batch, whatever its own length; a batch
already at the longest length comes back unchanged.
"""
import torch
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
    tokens = accelerator.pad_across_processes(tokens, dim=1, pad_index=PAD)
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
