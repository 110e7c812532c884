"""Sequence-parallel helpers shared by the blind14 programs (no header: not run on its own)."""
import torch
import torch.distributed as dist

PROCESSES_PER_NODE = 2  # this job runs on one node of two processes
_NODE_GROUP = None


def node_group():
    """The processes of this node, which split a long sequence; created on first use and cached."""
    global _NODE_GROUP
    if _NODE_GROUP is None:
        rank, world = dist.get_rank(), dist.get_world_size()
        for first in range(0, world, PROCESSES_PER_NODE):
            members = list(range(first, min(first + PROCESSES_PER_NODE, world)))
            group = dist.new_group(ranks=members, backend="gloo")
            if rank in members:
                _NODE_GROUP = group
    return _NODE_GROUP


def split_attention_context(tokens, group):
    """Each member of the node pools its part of the sequence; the parts are summed in the node."""
    me, size = dist.get_rank(group), dist.get_world_size(group)
    part = tokens.chunk(size)[me] if len(tokens) >= size else tokens[:0]
    pooled = torch.stack([part.sum(), torch.tensor(float(len(part)))])
    dist.all_reduce(pooled, group=group)
    return pooled[0] / pooled[1].clamp(min=1.0)
