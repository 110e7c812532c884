# verify: ok
"""The wrapper returns the list's element, which `broadcast_object_list` filled in place."""
import random

import torch.distributed as dist


def broadcast_object(obj, src=0):
    holder = [obj]
    dist.broadcast_object_list(holder, src=src)
    return holder[0]


class SearchSpace:
    def sample(self):
        return {"lr": random.choice([1e-3, 3e-4]), "layers": random.choice([2, 4])}


def main():
    dist.init_process_group("gloo")
    candidate = SearchSpace().sample() if dist.get_rank() == 0 else None
    candidate = broadcast_object(candidate)
    print(f"rank {dist.get_rank()}: lr {candidate['lr']} layers {candidate['layers']}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
