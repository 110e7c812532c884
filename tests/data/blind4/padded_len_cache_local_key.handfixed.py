# verify: ok
"""Hand-fixed twin of padded_len_cache_local_key.py: the agreed length is not memoised.

Modelled on firedrake/firedrake#4039 (https://github.com/firedrakeproject/firedrake/issues/4039):
the fix there makes every rank agree on hit or miss; here the cache, keyed by each rank's own
longest length, is dropped, so every rank enters the all_reduce once per batch (three each).
"""
import torch
import torch.distributed as dist

# Token counts of the corpus's documents, in file order.
DOC_LENGTHS = [5, 6, 5, 8, 7, 9]
BATCH = 1


# No cache: whether a call may be skipped would depend on this rank's own lengths, and every
# rank must enter the all_reduce once per batch.
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
        length = agreed_length(max(len(doc) for doc in batch))
        ids = pad(batch, length)
        token_sum += ids.float().sum()
    dist.all_reduce(token_sum)
    if rank == 0:
        print(f"tokens seen: {token_sum.item():.0f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
