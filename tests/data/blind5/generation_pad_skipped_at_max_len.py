# verify: error
"""`pad_across_processes` skipped by a process whose generations already reached the length cap.

Modelled on https://github.com/huggingface/accelerate/pull/19 (`pad_across_processes` exists
because gathering predictions of different lengths hangs) and
https://github.com/huggingface/trl/pull/4041 (a shortcut one rank takes on its own data before a
collective: "If any rank hits non_pad_entropies.numel() == 0, the collective call will block
forever").

`collect()` pads a batch of generated ids to the longest across processes, but skips the call
when the batch already ran to `MAX_NEW_TOKENS` ("it is as long as any batch can be"). Padding
would change nothing there, yet the other process's `pad_across_processes` first all-gathers
every process's length and waits for this one, which has gone on to `gather_for_metrics`. In the
second round process 1's batch runs to the cap and process 0's stops early.
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
    if tokens.shape[1] < MAX_NEW_TOKENS:
        tokens = accelerator.pad_across_processes(tokens, dim=1, pad_index=PAD)  # expect: BCL005
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
