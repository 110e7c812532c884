# verify: ok
"""The gather buffer exists on the destination only; the other processes pass None."""
import torch.distributed as dist


class Evaluator:
    def __init__(self):
        self.rank = dist.get_rank()
        self.world_size = dist.get_world_size()
        self._buffer = [None for _ in range(self.world_size)] if self.rank == 0 else None

    def predict(self, docs):
        return [{"doc": d, "answer": d[::-1]} for d in docs]

    def collect(self, results):
        dist.gather_object(results, self._buffer, dst=0)
        if self.rank == 0:
            return [r for per_rank in self._buffer for r in per_rank]
        return None


def main():
    dist.init_process_group("gloo")
    ev = Evaluator()
    docs = ["abc", "def"] if ev.rank == 0 else ["ghi"]
    merged = ev.collect(ev.predict(docs))
    if merged is not None:
        print(f"{len(merged)} results")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
