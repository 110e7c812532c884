# verify: ok
"""Hand fix of truncated_query_ids_local_max_len_concat_all_gather.

The processes agree on the longest valid length first (`dist.all_reduce(..., op=MAX)`) and every
process trims its queries to that length, so the gathered tensors have one shape (the padding
across processes suggested in https://github.com/pytorch/pytorch/issues/56112).
"""
import torch
import torch.distributed as dist

MAX_LEN = 12


@torch.no_grad()
def concat_all_gather(tensor):
    buckets = [torch.ones_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(buckets, tensor)
    return torch.cat(buckets, dim=0)


def main():
    dist.init_process_group("gloo")
    g = torch.Generator().manual_seed(100 + dist.get_rank())
    queue = []
    for step in range(2):
        valid_len = torch.randint(2, MAX_LEN, (3,), generator=g)
        query_idx = torch.randint(1, 50, (3, MAX_LEN), generator=g)
        max_len = valid_len.max().clone()
        dist.all_reduce(max_len, op=dist.ReduceOp.MAX)
        max_len = int(max_len)
        query_idx = query_idx[:, :max_len]
        keys = concat_all_gather(query_idx)
        queue.append(keys)
    print("queued key batches:", [tuple(k.shape) for k in queue])
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
