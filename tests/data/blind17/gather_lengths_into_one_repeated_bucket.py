# verify: error
"""Variable-length gather whose length buckets are one tensor listed world_size times.

Modelled on PrimeIntellect-ai/prime-rl#691 (https://github.com/PrimeIntellect-ai/prime-rl/pull/691),
"Fixes the all-gather not working because I wrongly initialized the all-gather tensor list with
shared tensor references, i.e. `[tensor] * world_size`", and on Lightning-AI/pytorch-lightning#3253
(https://github.com/Lightning-AI/pytorch-lightning/issues/3253), where
`gathered_result = world_size * [torch.zeros_like(result)]` left "tensors in all GPUs wrongly the
same as one GPU, since they share the same storage".

An evaluation script decodes its share of the prompts greedily and collects everybody's
generations for exact-match scoring with a small helper, `gather_variable_length`: all-gather the
lengths, pad to the longest, all-gather the padded ids, cut each one back to its length. The
length buckets are written `[torch.zeros_like(length)] * world`, one tensor listed twice, so
every process ends the first all-gather with the last process's length in both places.

Where the ranks part ways: the generations' lengths follow each process's own prompts. In round 1
process 0 generates 4 tokens and process 1 6, so the "longest" (6, process 1's) still fits
process 0's tokens and the round passes (with wrong lengths for process 0's slice). In round 2
process 0 generates 7 tokens and process 1 3: process 0 pads to 3, its 7 tokens do not fit, it
raises before the second all-gather, and process 1, inside it, loses its peer.
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
    lengths = [torch.zeros_like(length)] * world
    dist.all_gather(lengths, length)  # expect: BCL010
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
