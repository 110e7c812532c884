# verify: ok
"""Hand-fixed twin of task_batches_cross_device_negatives.py.

Before each step the processes agree (all-reduce MIN of "my batch may use cross-device
negatives") whether this step gathers: only when every process holds a retrieval batch do they
all call `gather_across_ranks()`; otherwise a retrieval batch falls back to its own in-batch
negatives and the `no_in_batch_neg` batch keeps its own negative, with no gather anywhere.
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


def contrastive_loss(encoder, source, query, positive, negative, cross_device, temperature=0.05):
    q, p, n = (F.normalize(encoder(t), dim=-1) for t in (query, positive, negative))
    if source.endswith("no_in_batch_neg"):
        scores = torch.stack([(q * p).sum(-1), (q * n).sum(-1)], dim=1)
        labels = torch.zeros(len(q), dtype=torch.long)
    elif cross_device:
        passages = gather_across_ranks(p)
        scores = q @ torch.cat([passages, n]).t()
        labels = torch.arange(len(q)) + dist.get_rank() * len(q)
    else:
        scores = q @ torch.cat([p, n]).t()
        labels = torch.arange(len(q))
    return F.cross_entropy(scores / temperature, labels)


def all_may_gather(source):
    allowed = torch.tensor([0 if source.endswith("no_in_batch_neg") else 1])
    dist.all_reduce(allowed, op=dist.ReduceOp.MIN)
    return bool(allowed.item())


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
        cross_device = all_may_gather(source)
        loss = contrastive_loss(encoder, source, query, positive, negative, cross_device)
        optimizer.zero_grad()
        loss.backward()
        average_gradients(encoder)
        optimizer.step()
        print(f"[rank {rank}] step {step} {source}: loss {loss.item():.3f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
