"""Rank 0 broadcasts the shape first; the receivers allocate from it."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Subset

PROMPTS = torch.arange(20).reshape(5, 4)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    loader = DataLoader(Subset(PROMPTS, range(rank, len(PROMPTS), world)), batch_size=3)
    local_batch = next(iter(loader))
    shape = torch.tensor(local_batch.shape)
    dist.broadcast(shape, src=0)
    shared = local_batch.clone() if rank == 0 else torch.zeros(*shape.tolist(), dtype=local_batch.dtype)
    dist.broadcast(shared, src=0)
    print(f"rank {rank}: scoring {shared.shape[0]} prompts, checksum {shared.sum().item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
