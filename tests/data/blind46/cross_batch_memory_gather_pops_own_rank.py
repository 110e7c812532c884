# verify: divergent check=MEMORY_DIGEST
"""Cross-batch memory filled with "my embeddings first, then everyone else's".

Modelled on https://github.com/KevinMusgrave/pytorch-metric-learning/issues/639 (the
distributed wrapper's `all_gather` pops the caller's own rank from the gathered list and
the caller puts its own tensor in front, so the rows of the cross-batch memory come in a
different order on every process and the memories end up different). The memory is
written slot by slot, so the order is its content.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F


def all_gather_others(x):
    parts = [torch.ones_like(x) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, x.contiguous())
    parts.pop(dist.get_rank())
    return torch.cat(parts)


class CrossBatchMemory:
    def __init__(self, size, dim):
        self.emb = torch.zeros(size, dim)
        self.labels = torch.full((size,), -1, dtype=torch.long)
        self.ptr = 0

    def enqueue(self, emb, labels):
        slots = (self.ptr + torch.arange(emb.shape[0])) % self.emb.shape[0]
        self.emb[slots] = emb
        self.labels[slots] = labels
        self.ptr = int((self.ptr + emb.shape[0]) % self.emb.shape[0])


def main():
    global MEMORY_DIGEST
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    head = torch.nn.Linear(6, 3)
    gen = torch.Generator().manual_seed(10 + dist.get_rank())
    memory = CrossBatchMemory(size=20, dim=3)
    for step in range(3):
        x = torch.randn(4, 6, generator=gen)
        y = torch.randint(0, 5, (4,), generator=gen)
        emb = F.normalize(head(x), dim=1).detach()
        all_emb = torch.cat([emb, all_gather_others(emb)])  # expect: BCL002
        all_y = torch.cat([y, all_gather_others(y)])
        memory.enqueue(all_emb, all_y)
    weights = torch.arange(1, memory.emb.shape[0] + 1, dtype=torch.float32)
    MEMORY_DIGEST = round(float((memory.emb.sum(dim=1) * weights).sum()), 4)
    print("memory digest", MEMORY_DIGEST)
    dist.destroy_process_group()


MEMORY_DIGEST = None

if __name__ == "__main__":
    main()
