# verify: hang
"""Run a function on one rank and share its result, with the leader named by LOCAL_RANK.

Modelled on https://github.com/verl-project/verl/pull/1449 ("Use global rank instead of local rank
[...] in broadcast") and https://github.com/meta-pytorch/torchrec/pull/4601 (helpers that "pick
their leader with a group-local rank but broadcast from a global rank"). Here every process passes
its own LOCAL_RANK as the leader, so each one believes it is the source.
"""
import os

import torch.distributed as dist


def invoke_on_rank_and_broadcast_result(fn, rank):
    result = [fn() if dist.get_rank() == rank else None]
    dist.broadcast_object_list(result, src=rank)
    return result[0]


class VocabService:
    def __init__(self, corpus):
        self.corpus = corpus
        self.leader = int(os.environ.get("LOCAL_RANK", "0"))  # "the local leader"

    def _count(self):
        return sorted({word for line in self.corpus for word in line.split()})

    def vocabulary(self):
        return invoke_on_rank_and_broadcast_result(self._count, self.leader)  # expect: BCL009


def main():
    dist.init_process_group("gloo")
    corpus = ["the cat sat", "on the mat", "the end"]
    vocab = VocabService(corpus).vocabulary()
    print(f"rank {dist.get_rank()}: {len(vocab)} words", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
