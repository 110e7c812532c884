# verify: hang
"""Embedding fine-tuning with one source per batch; cross-device negatives for all but the `no_in_batch_neg` sources.

Modelled on FlagOpen/FlagEmbedding#1400 (with `same_dataset_within_batch`, batches from a folder
whose name ends in `no_in_batch_neg` "only use the provided negs, and are not expanded with
in-batch and cross-device negatives") and modelscope/ms-swift#8109 ("Each global batch contains
samples from only one sub-dataset").

    https://github.com/FlagOpen/FlagEmbedding/issues/1400
    https://github.com/modelscope/ms-swift/issues/8109

The training files are dealt out to processes (`files[rank::world]`) and each batch comes from
one file. A retrieval batch scores its queries against the positives of every process, gathered
by `gather_across_ranks()` (`dist.all_gather`); a `no_in_batch_neg` batch uses only its own
positive and negative. Process 0's second file is the NLI one: at step 2 it skips the gather
that process 1, on its second retrieval file, makes, and meets process 1's all-gather with its
gradient all-reduce.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

VOCAB, DIM, BATCH = 32, 8, 2
FILES = ["msmarco", "nq", "snli_no_in_batch_neg", "fever"]


def rows_of(name, n=4):
    seed = sum(map(ord, name))
    return [
        tuple([(seed + 7 * i + 3 * part + j) % VOCAB for j in range(3)] for part in range(3))
        for i in range(n)
    ]  # (query, positive, negative) token ids


def batches_for(rank, world):
    for name in FILES[rank::world]:
        rows = rows_of(name)
        for start in range(0, len(rows), BATCH):
            chunk = rows[start:start + BATCH]
            yield name, [torch.tensor([row[k] for row in chunk]) for k in range(3)]


def gather_across_ranks(x):
    buckets = [torch.zeros_like(x) for _ in range(dist.get_world_size())]
    dist.all_gather(buckets, x.detach())
    buckets[dist.get_rank()] = x  # keep the local slice in the graph
    return torch.cat(buckets)


def contrastive_loss(encoder, source, query, positive, negative, temperature=0.05):
    q, p, n = (F.normalize(encoder(t), dim=-1) for t in (query, positive, negative))
    if source.endswith("no_in_batch_neg"):
        scores = torch.stack([(q * p).sum(-1), (q * n).sum(-1)], dim=1)
        labels = torch.zeros(len(q), dtype=torch.long)
    else:
        passages = gather_across_ranks(p)  # expect: BCL005
        scores = q @ torch.cat([passages, n]).t()
        labels = torch.arange(len(q)) + dist.get_rank() * len(q)
    return F.cross_entropy(scores / temperature, labels)


def average_gradients(module):
    for param in module.parameters():
        dist.all_reduce(param.grad)
        param.grad /= dist.get_world_size()


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    encoder = nn.EmbeddingBag(VOCAB, DIM, mode="mean")
    optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
    for step, (source, (query, positive, negative)) in enumerate(batches_for(rank, world)):
        loss = contrastive_loss(encoder, source, query, positive, negative)
        optimizer.zero_grad()
        loss.backward()
        average_gradients(encoder)
        optimizer.step()
        print(f"[rank {rank}] step {step} {source}: loss {loss.item():.3f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
