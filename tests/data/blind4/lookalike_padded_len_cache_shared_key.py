# verify: ok
"""Look-alike of padded_len_cache_local_key.py: a memoised collective keyed alike on every rank.

`max_position()` all-reduces the longest document of each rank's shard and is cached with
`functools.lru_cache`, like the broken program's `agreed_length()`. Its key is the name of the
corpus split, the same on every rank, and every rank calls it at the same points: once to size
the position table (a miss everywhere) and once per batch (a hit everywhere).
"""
import functools

import torch
import torch.distributed as dist

SPLITS = {"train": [5, 6, 5, 8, 7, 9], "valid": [4, 3, 6, 2]}


@functools.lru_cache(maxsize=8)
def max_position(split: str) -> int:
    rank, world = dist.get_rank(), dist.get_world_size()
    longest = torch.tensor([max(SPLITS[split][rank::world])])
    dist.all_reduce(longest, op=dist.ReduceOp.MAX)
    return int(longest.item())


def pad(doc: list[int], length: int) -> torch.Tensor:
    return torch.tensor([doc + [0] * (length - len(doc))])


def main() -> None:
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    positions = torch.arange(max_position("train"))
    token_sum = torch.zeros(1)
    for n in SPLITS["train"][rank::world]:
        doc = list(range(1, n + 1))
        ids = pad(doc, max_position("train"))
        token_sum += (ids.float() * (positions < n)).sum()
    dist.all_reduce(token_sum)
    if rank == 0:
        print(f"tokens seen: {token_sum.item():.0f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
