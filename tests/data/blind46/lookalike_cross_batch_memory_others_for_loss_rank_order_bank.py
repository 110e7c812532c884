# verify: ok check=MEMORY_DIGEST
"""Look-alike: "everyone else's" embeddings pop the own rank, but only for the loss.

As in `cross_batch_memory_gather_pops_own_rank`, a helper pops the caller's rank from the
gathered list. Here that list serves only as the extra negatives of this process's loss
(each process's loss is its own anyway); the cross-batch memory is written from the
gathered list in rank order, the same rows in the same slots on every process.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F


def gather_parts(x):
    parts = [torch.ones_like(x) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, x.contiguous())
    return parts


def main():
    global MEMORY_DIGEST
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    head = torch.nn.Linear(6, 3)
    gen = torch.Generator().manual_seed(10 + dist.get_rank())
    memory = torch.zeros(20, 3)
    ptr = 0
    for step in range(3):
        x = torch.randn(4, 6, generator=gen)
        emb = F.normalize(head(x), dim=1)
        parts = gather_parts(emb.detach())
        everyone = torch.cat(parts)
        parts.pop(dist.get_rank())
        negatives = torch.cat([torch.cat(parts), memory])
        local_loss = torch.logsumexp(emb @ negatives.T / 0.5, dim=1).mean()
        print("local loss", round(float(local_loss), 4))
        slots = (ptr + torch.arange(everyone.shape[0])) % memory.shape[0]
        memory[slots] = everyone
        ptr = int((ptr + everyone.shape[0]) % memory.shape[0])
    weights = torch.arange(1, memory.shape[0] + 1, dtype=torch.float32)
    MEMORY_DIGEST = round(float((memory.sum(dim=1) * weights).sum()), 4)
    dist.destroy_process_group()


MEMORY_DIGEST = None

if __name__ == "__main__":
    main()
