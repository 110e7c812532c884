# verify: error,hang
"""Query token ids cut to this process's longest valid length, then gathered for a MoCo queue.

Modelled on https://github.com/pytorch/pytorch/issues/56112 ("all_gather cannot gather variable
length tensors?"): variable-length inputs to a MoCo-style model were trimmed to the batch's own
longest valid length (`query_idx[:, :max_len]`) and then gathered from every GPU; the gather
blocked because each GPU held another length. The gather sits in MoCo's helper
`concat_all_gather`, which allocates buckets shaped like the local tensor.
"""
import torch
import torch.distributed as dist

MAX_LEN = 12


@torch.no_grad()
def concat_all_gather(tensor):
    buckets = [torch.ones_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(buckets, tensor)  # expect: BCL015
    return torch.cat(buckets, dim=0)


def main():
    dist.init_process_group("gloo")
    g = torch.Generator().manual_seed(100 + dist.get_rank())
    queue = []
    for step in range(2):
        valid_len = torch.randint(2, MAX_LEN, (3,), generator=g)
        query_idx = torch.randint(1, 50, (3, MAX_LEN), generator=g)
        max_len = int(valid_len.max())
        query_idx = query_idx[:, :max_len]
        keys = concat_all_gather(query_idx)
        queue.append(keys)
    print("queued key batches:", [tuple(k.shape) for k in queue])
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
