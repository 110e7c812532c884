# verify: ok
"""Like `leader_rank_from_local_rank`: the same run-on-one-rank-and-share helper, whose `src` is a
parameter; but every caller passes the same global rank, from the run's config.
"""
from dataclasses import dataclass

import torch.distributed as dist


@dataclass(frozen=True)
class DistConfig:
    leader_rank: int = 0


def invoke_on_rank_and_broadcast_result(fn, rank):
    result = [fn() if dist.get_rank() == rank else None]
    dist.broadcast_object_list(result, src=rank)
    return result[0]


class VocabService:
    def __init__(self, corpus, cfg: DistConfig):
        self.corpus = corpus
        self.cfg = cfg

    def _count(self):
        return sorted({word for line in self.corpus for word in line.split()})

    def vocabulary(self):
        return invoke_on_rank_and_broadcast_result(self._count, self.cfg.leader_rank)


def main():
    dist.init_process_group("gloo")
    corpus = ["the cat sat", "on the mat", "the end"]
    vocab = VocabService(corpus, DistConfig()).vocabulary()
    print(f"rank {dist.get_rank()}: {len(vocab)} words", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
