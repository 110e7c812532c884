# verify: error,hang
"""MoCo queue that skips keys whose sample ids it already holds, then gathers the rest.

Modelled on https://github.com/facebookresearch/moco/pull/99 ("enqueue fixed": the
`_dequeue_and_enqueue` of MoCo assumes every process hands `concat_all_gather` a batch of
the same size; a smaller batch breaks it). Here each process drops, before the gather,
the keys of samples that are already in the queue: how many it drops depends on its own
batch, so the processes hand `all_gather` tensors of different lengths.
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
        keys = concat_all_gather(keys[fresh])  # expect: BCL015
        ids = concat_all_gather(ids[fresh])
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
