# verify: ok
"""Look-alike: the length buckets come from one tensor, but as distinct views of it.

The same evaluation and the same prompts as gather_lengths_into_one_repeated_bucket, but the
length buckets are `list(torch.zeros(world, dtype=torch.long).chunk(world))`: one allocation,
which reads like the `[tensor] * world` mistake, cut into `world` one-element views at different
offsets, so each process's length lands in its own element and `lengths` also comes out as one
tensor to take the maximum of.
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
    table = torch.zeros(world, dtype=torch.long)
    lengths = list(table.chunk(world))  # one view per process into the same table
    dist.all_gather(lengths, length)
    longest = int(table.max())
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
