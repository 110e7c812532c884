# verify: ok
"""Hand fix of gather_lengths_into_one_repeated_bucket: one length bucket per process.

Modelled on PrimeIntellect-ai/prime-rl#691 (https://github.com/PrimeIntellect-ai/prime-rl/pull/691)
and Lightning-AI/pytorch-lightning#3253
(https://github.com/Lightning-AI/pytorch-lightning/issues/3253), whose fix is the same: build the
list with a comprehension, `[torch.zeros_like(length) for _ in range(world)]`, so that each
process's length lands in its own tensor; the padding then fits every generation.
"""
import torch
import torch.distributed as dist
from torch import nn

VOCAB = 10
EOS = 0
PAD = -1
MAX_NEW = 8
# prompts in file order; rows rank::world are this process's share, one prompt per round
PROMPTS = [[2, 5, 6], [1, 4], [8, 3], [5, 7]]


class CountingLM(nn.Module):
    """Stands in for the language model: after token t it predicts t + 1 (mod VOCAB, 0 is EOS)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, VOCAB)
        with torch.no_grad():
            self.emb.weight.copy_(torch.eye(VOCAB).roll(1, dims=1) * 10)

    def forward(self, ids):
        return self.emb(ids)


@torch.no_grad()
def greedy_decode(model, prompt):
    ids = torch.tensor(prompt)
    out = []
    for _ in range(MAX_NEW):
        nxt = int(model(ids)[-1].argmax())
        out.append(nxt)
        if nxt == EOS:
            break
        ids = torch.cat([ids, torch.tensor([nxt])])
    return torch.tensor(out)


def gather_variable_length(ids):
    """All-gather 1-D tensors of different lengths: lengths first, then the padded ids."""
    world = dist.get_world_size()
    length = torch.tensor([ids.numel()])
    lengths = [torch.zeros_like(length) for _ in range(world)]
    dist.all_gather(lengths, length)
    longest = max(int(n) for n in lengths)
    padded = torch.full((longest,), PAD, dtype=ids.dtype)
    padded[: ids.numel()] = ids
    buckets = [torch.zeros_like(padded) for _ in range(world)]
    dist.all_gather(buckets, padded)
    return [b[: int(n)] for b, n in zip(buckets, lengths)]


def reference(prompt):
    return list(range(prompt[-1] + 1, VOCAB)) + [EOS]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    model = CountingLM().eval()
    hits = 0
    for start in range(0, len(PROMPTS), world):
        generated = greedy_decode(model, PROMPTS[start + rank])
        everyone = gather_variable_length(generated)
        hits += sum(int(g.tolist() == reference(PROMPTS[start + r])) for r, g in enumerate(everyone))
    if rank == 0:
        print(f"exact match {hits}/{len(PROMPTS)}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
