# verify: hang
"""One process reads the label vocabulary and shares it; which one is a module constant,
`LOADER_RANK = 1`. The broadcast sits inside the `if rank == LOADER_RANK:` arm, so only the loader
sends and rank 0 goes on to the training all_reduce.

Modelled on meta-pytorch/tnt#936 (https://github.com/meta-pytorch/tnt/pull/936): a helper that
broadcasts the latest checkpoint path from one rank hangs when that rank alone enters the code that
calls it.
"""
import torch
import torch.distributed as dist

LOADER_RANK = 1
LABELS_ON_DISK = ["cat", "dog", "bird"]


def read_vocabulary():
    return {label: index for index, label in enumerate(LABELS_ON_DISK)}


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    vocabulary = {}
    if rank == LOADER_RANK:
        holder = [read_vocabulary()]
        dist.broadcast_object_list(holder, src=LOADER_RANK)  # expect: BCL005
        vocabulary = holder[0]
    counts = torch.zeros(3)
    counts[rank % 3] += 1.0
    dist.all_reduce(counts)
    print(f"rank {rank}: {len(vocabulary)} labels, counts {counts.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
