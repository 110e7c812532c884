# verify: hang
"""Sliding-window perplexity over each process's own documents, gathered window by window.

Modelled on cp2k/cp2k#5440 ("Handle empty atom chunks in MPI runs": ranks with a different number
of local chunks took different communication paths, "resulting in mismatched MPI collectives and
a hang"): the strided evaluation of the transformers perplexity guide, run on the documents
`split_between_processes` gives each process, with an `accelerator.gather` of every window's
summed negative log-likelihood. The number of windows follows the lengths of the process's own
documents: 4 on process 0 (10 and 12 tokens), 6 on process 1 (9 and 20 tokens).
"""
import math

import torch
from accelerate import Accelerator
from torch import nn

VOCAB, WINDOW, STRIDE = 16, 8, 4
LENGTHS = [10, 12, 9, 20]


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 12)
        self.head = nn.Linear(12, VOCAB)

    def forward(self, ids):
        return self.head(self.embed(ids))


def documents():
    g = torch.Generator().manual_seed(0)
    return [torch.randint(0, VOCAB, (n,), generator=g) for n in LENGTHS]


def windows(doc):
    prev_end = 0
    for begin in range(0, len(doc), STRIDE):
        end = min(begin + WINDOW, len(doc))
        yield doc[begin:end], end - prev_end
        prev_end = end
        if end == len(doc):
            break


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = accelerator.prepare(TinyLM())
    model.eval()
    nll_sum, n_tokens = 0.0, 0
    with accelerator.split_between_processes(documents()) as mine:
        for doc in mine:
            for ids, trg_len in windows(doc):
                with torch.no_grad():
                    logits = model(ids[None, :-1])[0]
                logp = logits.log_softmax(-1)[-trg_len:] if trg_len < len(ids) else logits.log_softmax(-1)
                targets = ids[1:][-len(logp):]
                nll = -logp.gather(1, targets[:, None]).sum()
                both = accelerator.gather(torch.stack([nll, torch.tensor(float(len(targets)))]))  # expect: BCL005
                nll_sum += both[0::2].sum().item()
                n_tokens += int(both[1::2].sum().item())
    accelerator.print(f"perplexity {math.exp(nll_sum / n_tokens):.2f} over {n_tokens} tokens")
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
