"""The loader reads; every process joins the broadcast from LOADER_RANK."""
import torch
import torch.distributed as dist

LOADER_RANK = 1
LABELS_ON_DISK = ["cat", "dog", "bird"]


def read_vocabulary():
    return {label: index for index, label in enumerate(LABELS_ON_DISK)}


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    holder = [read_vocabulary() if rank == LOADER_RANK else None]
    dist.broadcast_object_list(holder, src=LOADER_RANK)
    vocabulary = holder[0]
    counts = torch.zeros(3)
    counts[rank % 3] += 1.0
    dist.all_reduce(counts)
    print(f"rank {rank}: {len(vocabulary)} labels, counts {counts.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
