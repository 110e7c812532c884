# verify: error
"""A project's `broadcast_object` wrapper hands back what `dist.broadcast_object_list` returns,
which is None (torch fills the list in place). The run configuration chosen on rank 0 therefore
arrives as None on every process, and reading it fails.

Modelled on mosaicml/composer#189 "Added helper methods for torch.distributed.broadcast"
(https://github.com/mosaicml/composer/pull/189) and open-mmlab/mmrazor#153
(https://github.com/open-mmlab/mmrazor/pull/153), whose `broadcast_object_list` wrapper was made
"consistent with pytorch": "new `broad_object_list` is without return value".
"""
import random

import torch.distributed as dist


def broadcast_object(obj, src=0):
    holder = [obj]
    return dist.broadcast_object_list(holder, src=src)  # expect: BCL006


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
