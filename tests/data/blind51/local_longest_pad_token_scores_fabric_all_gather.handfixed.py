# verify: ok
"""Hand fix of local_longest_pad_token_scores_fabric_all_gather.

The processes first agree on the longest sequence of all (`fabric.all_reduce(..., reduce_op="max")`)
and every batch is padded to it, so the per-token scores have one shape everywhere before the
gather (as the fix of https://github.com/EleutherAI/bergson/pull/227 pads every batch alike).
"""
import torch
from lightning.fabric import Fabric

PAD = 0
DOCS = [[5, 6, 7], [3, 4, 5, 6, 7, 8, 9], [8, 9], [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2],
        [4, 4, 4, 4], [2, 3, 4, 5, 6, 7]]


def collate_to(seqs, length):
    ids = torch.full((len(seqs), length), PAD, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
    return ids


def main():
    fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    fabric.launch()
    torch.manual_seed(0)
    embed = torch.nn.Embedding(16, 4)
    head = torch.nn.Linear(4, 1)

    shard = DOCS[fabric.global_rank::fabric.world_size]
    local_longest = torch.tensor(max(len(s) for s in shard))
    longest = int(fabric.all_reduce(local_longest, reduce_op="max").item())
    ids = collate_to(shard, longest)
    with torch.no_grad():
        scores = head(embed(ids)).squeeze(-1) * (ids != PAD)
    all_scores = fabric.all_gather(scores)
    top = all_scores.flatten().topk(3).values
    fabric.print("top token scores:", top.tolist())
    fabric.barrier()


if __name__ == "__main__":
    main()
