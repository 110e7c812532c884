# verify: error,hang
"""Dynamic padding to this process's longest sequence, then a gather of per-token scores.

Modelled on https://github.com/EleutherAI/bergson/pull/227 ("Fix distributed hangs": batches
were not padded properly, so different ranks saw batches with different numbers of tokens):
each process pads its own batch to the longest sequence it holds, computes one score per
token and gathers the scores from every process. `fabric.all_gather` allocates buckets shaped
like the local tensor, so the processes send different byte counts into one collective.
"""
import torch
from lightning.fabric import Fabric

PAD = 0
# token ids of the documents; the shards are interleaved, so each process gets other lengths
DOCS = [[5, 6, 7], [3, 4, 5, 6, 7, 8, 9], [8, 9], [1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2],
        [4, 4, 4, 4], [2, 3, 4, 5, 6, 7]]


def collate_dynamic(seqs):
    longest = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), longest), PAD, dtype=torch.long)
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
    ids = collate_dynamic(shard)
    with torch.no_grad():
        scores = head(embed(ids)).squeeze(-1) * (ids != PAD)
    all_scores = fabric.all_gather(scores)  # expect: BCL015
    top = all_scores.flatten().topk(3).values
    fabric.print("top token scores:", top.tolist())
    fabric.barrier()


if __name__ == "__main__":
    main()
