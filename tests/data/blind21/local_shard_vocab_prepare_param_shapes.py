# verify: error
"""Vocabulary built from each process's own share of the corpus, then the model is prepared.

Modelled on https://github.com/NJU-PCALab/STAR/issues/44 ("RuntimeError: DDP expects same model
across all ranks", raised from `accelerator.prepare` -> `DistributedDataParallel.__init__` ->
`_verify_param_shape_across_processes`): the processes built models that differ. Here the
difference comes from the data: each process tokenises only the lines that
`split_between_processes` gave it, sizes the embedding and the output layer from that vocabulary,
and the collective that compares parameter shapes inside `prepare` fails.
"""
import torch
from accelerate import Accelerator
from torch import nn

CORPUS = [
    "the cat sat on the mat",
    "a dog ran in the park",
    "the cat chased a mouse",
    "birds sing at dawn",
    "the dog sat by the door",
    "rain fell on the quiet town",
]
SPECIALS = ["<pad>", "<unk>", "<bos>", "<eos>"]


def build_vocab(lines):
    words = sorted({w for line in lines for w in line.split()})
    return {tok: i for i, tok in enumerate(SPECIALS + words)}


class TinyLM(nn.Module):
    def __init__(self, vocab_size, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, ids):
        return self.head(self.embed(ids))


def encode(vocab, line):
    return torch.tensor([vocab["<bos>"]] + [vocab.get(w, vocab["<unk>"]) for w in line.split()])


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    with accelerator.split_between_processes(CORPUS) as local_lines:
        local_lines = list(local_lines)
    vocab = build_vocab(local_lines)  # expect: BCL015
    model = TinyLM(len(vocab))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = accelerator.prepare(model, opt)
    for line in local_lines:
        ids = encode(vocab, line)
        logits = model(ids[:-1][None])
        loss = nn.functional.cross_entropy(logits[0], ids[1:])
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
