# verify: error
"""Rank 0 draws the epoch's sample order and sends it; the others receive into a float buffer.

Modelled on https://github.com/pytorch/pytorch/issues/91535 ("if the tensor on another GPU has a
different dtype, it will silently generate wrong results") and
https://github.com/mlcommons/algorithmic-efficiency/pull/146 ("Using the wrong shape when
initializing the variable to receive a broadcasted tensor can actually result in a deadlock").
`torch.randperm` is int64; the shared `receive_buffer()` helper of another module allocates float32.
"""
import torch
import torch.distributed as dist

from mod_buffers import receive_buffer


class ShuffleSync:
    def __init__(self, num_samples: int, base_seed: int = 17):
        self.num_samples = num_samples
        self.base_seed = base_seed

    def order_for_epoch(self, epoch: int) -> torch.Tensor:
        if dist.get_rank() == 0:
            gen = torch.Generator().manual_seed(self.base_seed + epoch)
            order = torch.randperm(self.num_samples, generator=gen)
        else:
            order = receive_buffer(self.num_samples)
        dist.broadcast(order, src=0)  # expect: BCL007
        return order


def main():
    dist.init_process_group("gloo")
    sync = ShuffleSync(num_samples=12)
    for epoch in range(2):
        order = sync.order_for_epoch(epoch)
        mine = order[dist.get_rank()::dist.get_world_size()]
        print(f"rank {dist.get_rank()} epoch {epoch}: {mine.tolist()}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
