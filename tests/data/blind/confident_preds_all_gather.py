# verify: error
"""Each process keeps only its confident predictions (a Python list filled in a loop with an
`if score > threshold` filter), turns them into a tensor and all-gathers it into buckets shaped
like its own tensor. The processes keep a different number of predictions, so the buckets do not
match what the other process sends.

Modelled on Lightning-AI/pytorch-lightning#7773 "Enable all_gather to work for Tensors with
different shapes along the first dimension"
(https://github.com/Lightning-AI/pytorch-lightning/issues/7773) and pytorch/pytorch#70985 "Gather
tensor in different gpu" (https://github.com/pytorch/pytorch/issues/70985).
"""
import torch
import torch.distributed as dist

THRESHOLD = 0.5


def confident_predictions(scores):
    kept = []
    for i, s in enumerate(scores.tolist()):
        if s > THRESHOLD:
            kept.append([float(i), s])
    return torch.tensor(kept)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    g = torch.Generator().manual_seed(3 + rank)
    scores = torch.rand(10, generator=g)
    preds = confident_predictions(scores)
    buckets = [torch.empty_like(preds) for _ in range(world)]
    dist.all_gather(buckets, preds)  # expect: BCL015
    merged = torch.cat(buckets)
    print(f"rank {rank}: kept {len(preds)}, merged {len(merged)}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
