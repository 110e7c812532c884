# verify: hang
"""Parallel-group registry that creates each group only on the processes that belong to it.

Modelled on https://github.com/NVIDIA/Megatron-LM/pull/5214 (creating process groups only
where `rank in ranks`, against torch's requirement that every process enter `new_group` for
every group, in the same order). torch names each new group by a counter that every call
advances; the embedding group, which only the first pipeline stage belongs to, advances it on
that process alone, so the data-parallel group created next gets a different name on each
process and neither finds the other.
"""
import torch
import torch.distributed as dist

_EMBEDDING_GROUP = None
_DATA_PARALLEL_GROUP = None


def initialize_parallel_groups():
    global _EMBEDDING_GROUP, _DATA_PARALLEL_GROUP
    rank, world = dist.get_rank(), dist.get_world_size()
    embedding_ranks = [0]  # the first pipeline stage holds the word embeddings
    if rank in embedding_ranks:
        _EMBEDDING_GROUP = dist.new_group(embedding_ranks)  # expect: BCL005
    data_parallel_ranks = list(range(world))
    if rank in data_parallel_ranks:
        _DATA_PARALLEL_GROUP = dist.new_group(data_parallel_ranks)


def main():
    dist.init_process_group("gloo")
    initialize_parallel_groups()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    x = torch.randn(3, 4) + dist.get_rank()
    model(x).sum().backward()
    for p in model.parameters():
        dist.all_reduce(p.grad, group=_DATA_PARALLEL_GROUP)
    print(f"process {dist.get_rank()}: grad norm {model.weight.grad.norm().item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
