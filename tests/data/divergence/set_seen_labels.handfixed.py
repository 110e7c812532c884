"""One all_reduce of a counter vector over the configured classes, whatever each shard saw."""
import torch
import torch.distributed as dist

LABELS = [0, 1, 2, 1, 0, 1, 0, 1, 1, 0]
NUM_CLASSES = 3


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    shard = LABELS[rank * 5:(rank + 1) * 5]
    counts = torch.tensor([float(shard.count(label)) for label in range(NUM_CLASSES)])
    dist.all_reduce(counts)
    totals = {label: int(c) for label, c in enumerate(counts.tolist()) if c}
    print(f"rank {rank}: class counts {totals}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
