# verify: error
"""Pad every rank's batch to one agreed length, memoised per local length.

Modelled on firedrake/firedrake#4039 (https://github.com/firedrakeproject/firedrake/issues/4039)
and OP2/PyOP2#696 (https://github.com/OP2/PyOP2/issues/696): a cache in front of a collective is
hit on some ranks and missed on others, and only the ranks that miss enter the collective.

`agreed_length()` all-reduces the longest sequence so that every rank pads alike, and
`functools.lru_cache` memoises it by the caller's own longest length. The corpus is sharded by
rank: rank 0's batches are 5, 5 and 7 tokens long (the second is a cache hit), rank 1's 6, 8
and 9 (three misses), so rank 1 makes one all_reduce more than rank 0.
"""
import functools

import torch
import torch.distributed as dist

# Token counts of the corpus's documents, in file order.
DOC_LENGTHS = [5, 6, 5, 8, 7, 9]
BATCH = 1


@functools.lru_cache(maxsize=64)
def agreed_length(local_len: int) -> int:
    longest = torch.tensor([local_len])
    dist.all_reduce(longest, op=dist.ReduceOp.MAX)
    return int(longest.item())


def shard(rank: int, world: int) -> list[list[int]]:
    return [list(range(1, n + 1)) for n in DOC_LENGTHS[rank::world]]


def batches(docs: list[list[int]]):
    for start in range(0, len(docs), BATCH):
        yield docs[start:start + BATCH]


def pad(batch: list[list[int]], length: int) -> torch.Tensor:
    return torch.tensor([doc + [0] * (length - len(doc)) for doc in batch])


def main() -> None:
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    token_sum = torch.zeros(1)
    for batch in batches(shard(rank, world)):
        length = agreed_length(max(len(doc) for doc in batch))  # expect: BCL005
        ids = pad(batch, length)
        token_sum += ids.float().sum()
    dist.all_reduce(token_sum)
    if rank == 0:
        print(f"tokens seen: {token_sum.item():.0f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
