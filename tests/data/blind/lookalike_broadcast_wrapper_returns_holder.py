# verify: ok
"""Looks like a wrapper returning a broadcast's result, but the wrapper returns the in-place filled
list element, and the value is computed on rank 0 and None elsewhere as broadcast_object_list
expects."""
import random

import torch.distributed as dist


def broadcast_object(obj, src=0):
    holder = [obj]
    dist.broadcast_object_list(holder, src=src)
    return holder[0]


def main():
    dist.init_process_group("gloo")
    random.seed(dist.get_rank())
    candidate = {"lr": random.choice([1e-3, 3e-4])} if dist.get_rank() == 0 else None
    candidate = broadcast_object(candidate)
    print(f"rank {dist.get_rank()}: lr {candidate['lr']}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
