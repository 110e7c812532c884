# verify: ok
"""Looks like a gather buffer made on every process, but the list is passed only where the process
is the destination (`buf if rank == dst else None`)."""
import torch.distributed as dist

DST = 0


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    results = [f"rank{rank}-item{i}" for i in range(rank + 1)]
    buf = [None] * world
    dist.gather_object(results, buf if rank == DST else None, dst=DST)
    if rank == DST:
        print(f"gathered {sum(len(r) for r in buf)} items")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
