# verify: hang,error
"""Predictions gathered to the process that holds the most of them, chosen from a local table.

Modelled on https://github.com/vllm-project/vllm/pull/2528 (`tensor_model_parallel_gather`
passed a `dst` that was not the rank every process meant, so the processes disagreed about
the destination of `torch.distributed.gather`). Here the destination is meant to be the process
with the largest shard, which has the most memory to spare; `pick_collector` builds the sizes
table from this process's own shard and zeros for the others, so each process finds itself
the largest and calls `gather` as the destination, each waiting for the other's tensor.
"""
import torch
import torch.distributed as dist


def pick_collector(local_count, world):
    sizes = [0] * world
    sizes[dist.get_rank()] = local_count
    return max(range(world), key=lambda r: sizes[r])


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    g = torch.Generator().manual_seed(5)
    preds = torch.rand(10, generator=g)
    mine = preds[rank::world]
    summary = torch.stack([mine.sum(), torch.tensor(float(len(mine)))])
    dst = pick_collector(len(mine), world)
    bucket = [torch.zeros(2) for _ in range(world)] if rank == dst else None
    dist.gather(summary, bucket, dst=dst)  # expect: BCL009
    if bucket is not None:
        total = torch.stack(bucket).sum(0)
        print(f"collector {rank}: mean prediction {(total[0] / total[1]).item():.4f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
