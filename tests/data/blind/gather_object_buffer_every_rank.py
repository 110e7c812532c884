# verify: error
"""An evaluator allocates its gather buffer in `__init__`, `[None for _ in range(world_size)]`,
on every process, and passes it to `dist.gather_object(..., dst=0)`. torch requires the list on
the destination only: the other process fails with a ValueError.

Modelled on EvolvingLMMs-Lab/lmms-eval#322 "incorrect RANK (?) causing issues in 'gather',
lmms_eval.evaluator" (https://github.com/EvolvingLMMs-Lab/lmms-eval/issues/322): `gather_object`
failed in `_validate_output_list_for_rank`; huggingface/accelerate#2733 shows the usual spelling
`txt_out_across_devices if dist.get_rank() == 0 else None`.
"""
import torch.distributed as dist


class Evaluator:
    def __init__(self):
        self.rank = dist.get_rank()
        self.world_size = dist.get_world_size()
        self._buffer = [None for _ in range(self.world_size)]

    def predict(self, docs):
        return [{"doc": d, "answer": d[::-1]} for d in docs]

    def collect(self, results):
        dist.gather_object(results, self._buffer, dst=0)  # expect: BCL014
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
