"""Process groups of the trainer: one for gradients, one for token statistics."""
import torch.distributed as dist


def make_groups():
    ranks = list(range(dist.get_world_size()))
    return {"grads": dist.new_group(ranks, backend="gloo"), "stats": dist.new_group(ranks, backend="gloo")}


def sync_grads(model, groups):
    for p in model.parameters():
        dist.all_reduce(p.grad, group=groups["grads"])
        p.grad /= dist.get_world_size()


def sync_stats(stats, groups):
    dist.all_reduce(stats, group=groups["stats"])
    return stats
