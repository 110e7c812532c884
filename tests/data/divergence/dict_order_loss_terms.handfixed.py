"""The loss terms are reduced in sorted key order, the same on every process."""
import torch
import torch.distributed as dist

ANNOTATIONS = ["box", "cls", "cls", "box"]  # the targets of the data set, in file order
WEIGHTS = {"box": 2.0, "cls": 5.0}
REDUCED = {}


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    shard = ANNOTATIONS[rank * 2:(rank + 1) * 2]
    losses = {}
    for kind in shard:  # a loss term per kind of target, in the order the batch produced them
        losses[kind] = torch.tensor([WEIGHTS[kind] * (1.0 + rank)])
    for name in sorted(losses):
        value = losses[name]
        dist.all_reduce(value)
        REDUCED[name] = round(value.item() / world, 4)
    print(f"rank {rank}: {REDUCED}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
