"""Label-count helpers shared by the curation scripts (imported, not run on its own)."""
import torch
import torch.distributed as dist


def gather_label_counts(counts):
    """Sum a per-rank vector of label counts over the ranks (all-gather, then add)."""
    buckets = [torch.zeros_like(counts) for _ in range(dist.get_world_size())]
    dist.all_gather(buckets, counts)
    return torch.stack(buckets).sum(0)
