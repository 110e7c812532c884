# verify: ok
"""The processes first all-gather their counts, pad their predictions to the largest count, gather
the padded tensors and cut each one back to its own count."""
import torch
import torch.distributed as dist

THRESHOLD = 0.5


def confident_predictions(scores):
    kept = []
    for i, s in enumerate(scores.tolist()):
        if s > THRESHOLD:
            kept.append([float(i), s])
    return torch.tensor(kept).reshape(-1, 2)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    g = torch.Generator().manual_seed(3 + rank)
    scores = torch.rand(10, generator=g)
    preds = confident_predictions(scores)
    count = torch.tensor([len(preds)])
    counts = [torch.zeros_like(count) for _ in range(world)]
    dist.all_gather(counts, count)
    longest = int(max(c.item() for c in counts))
    padded = torch.zeros(longest, 2)
    padded[: len(preds)] = preds
    buckets = [torch.zeros(longest, 2) for _ in range(world)]
    dist.all_gather(buckets, padded)
    merged = torch.cat([b[: int(c.item())] for b, c in zip(buckets, counts)])
    print(f"rank {rank}: kept {len(preds)}, merged {len(merged)}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
