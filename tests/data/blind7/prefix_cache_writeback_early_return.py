# verify: error
"""Write-through of a prefix KV cache whose completion check returns early on an empty queue.

Modelled on sgl-project/sglang#26923 (https://github.com/sgl-project/sglang/pull/26923):
"`writing_check()`'s early-return before the `all_reduce` reliably TP-deadlocked ...
`ongoing_write_through` diverges per-rank (host-pool alloc success differs across ranks), so one
rank takes the early return and skips the collective while peers enter it".

Two tensor-parallel ranks serve the same requests. Each holds the KV of its own heads (3 heads
over 2 ranks: 2 on rank 0, 1 on rank 1), so a prefix costs rank 0 twice the host memory. The
host pool has the same capacity everywhere (room for 4 prefixes on rank 0, 8 on rank 1), so from
the fifth new prefix on rank 0 queues nothing, returns early from `writing_check()`, and rank 1
enters the MIN all-reduce alone.
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

    def writing_check(self):
        if not self.pending:
            return 0
        done = torch.tensor([len(self.pending)])
        dist.all_reduce(done, op=dist.ReduceOp.MIN)  # expect: BCL005
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
    for tokens in requests:
        kv = cache.lookup_or_insert(tokens)
        flushed += cache.writing_check()
        logits = kv.sum(dim=(0, 1))[:VOCAB].repeat(2)  # this rank's heads' share of the logits
        dist.all_reduce(logits)
    print(f"rank {rank}: {flushed} prefixes written to host, {len(cache.pending)} pending")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
