# verify: ok
"""Look-alike of prefix_cache_writeback_early_return: an early return before the MIN all-reduce.

The completion check still returns early, but on a step count every rank shares (it checks every
second request), not on its own queue: every rank enters the all-reduce on the same requests.
The host pools still fill at different rates (2 heads on rank 0, 1 on rank 1).
"""
import torch
import torch.distributed as dist

N_HEADS, HEAD_DIM, PREFIX, VOCAB = 3, 8, 4, 16
POOL_BYTES = 1100


class HostPool:
    def __init__(self, capacity):
        self.free = capacity

    def try_alloc(self, nbytes):
        if nbytes > self.free:
            return False
        self.free -= nbytes
        return True


class PrefixCache:
    def __init__(self, heads):
        self.heads = heads
        self.device = {}
        self.host = {}
        self.pending = []
        self.pool = HostPool(POOL_BYTES)

    def lookup_or_insert(self, tokens):
        key = tuple(tokens[:PREFIX].tolist())
        if key not in self.device:
            kv = torch.randn(len(self.heads), PREFIX, HEAD_DIM)
            self.device[key] = kv
            if self.pool.try_alloc(kv.numel() * kv.element_size()):
                self.pending.append((key, kv))
        return self.device[key]

    def writing_check(self, step):
        if step % 2:
            return 0
        done = torch.tensor([len(self.pending)])
        dist.all_reduce(done, op=dist.ReduceOp.MIN)
        n = int(done.item())
        for key, kv in self.pending[:n]:
            self.host[key] = kv.clone()
        del self.pending[:n]
        return n


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    requests = [torch.randint(0, VOCAB, (PREFIX + 3,)) for _ in range(6)]
    torch.manual_seed(1 + rank)
    cache = PrefixCache(heads=list(range(rank, N_HEADS, world)))
    flushed = 0
    for step, tokens in enumerate(requests):
        kv = cache.lookup_or_insert(tokens)
        flushed += cache.writing_check(step)
        logits = kv.sum(dim=(0, 1))[:VOCAB].repeat(2)  # this rank's heads' share of the logits
        dist.all_reduce(logits)
    print(f"rank {rank}: {flushed} prefixes written to host, {len(cache.pending)} pending")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
