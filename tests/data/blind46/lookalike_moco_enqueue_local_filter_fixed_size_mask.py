# verify: ok
"""Look-alike: MoCo keys filtered on each process, but gathered at full size with a mask.

Each process decides on its own batch which keys are new to the queue (as in
`moco_enqueue_filtered_keys_concat_all_gather`), but it does not cut the batch: it gathers
all four keys and a `fresh` mask of the same length, and enqueues only the gathered rows
whose mask is set. Every `all_gather` has the same shape on every process, and the queue
is written alike everywhere.
"""
import torch
import torch.distributed as dist
import torch.nn.functional as F


@torch.no_grad()
def concat_all_gather(tensor):
    buckets = [torch.zeros_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(buckets, tensor)
    return torch.cat(buckets)


class KeyQueue:
    def __init__(self, dim, size):
        self.keys = torch.zeros(size, dim)
        self.ids = torch.full((size,), -1, dtype=torch.long)
        self.ptr = 0

    @torch.no_grad()
    def dequeue_and_enqueue(self, keys, ids):
        fresh = ~torch.isin(ids, self.ids)
        keys, ids = concat_all_gather(keys), concat_all_gather(ids)
        fresh = concat_all_gather(fresh.long()).bool()
        keys, ids = keys[fresh], ids[fresh]
        n = keys.shape[0]
        slots = (self.ptr + torch.arange(n)) % self.keys.shape[0]
        self.keys[slots] = keys
        self.ids[slots] = ids
        self.ptr = int((self.ptr + n) % self.keys.shape[0])


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    encoder = torch.nn.Linear(8, 4)
    gen = torch.Generator().manual_seed(100 + dist.get_rank())
    queue = KeyQueue(dim=4, size=64)
    for step in range(6):
        ids = torch.randint(0, 12, (4,), generator=gen)
        x = torch.randn(4, 8, generator=gen)
        with torch.no_grad():
            k = F.normalize(encoder(x), dim=1)
        queue.dequeue_and_enqueue(k, ids)
    print("queue pointer", queue.ptr)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
