# verify: hang
"""The model files are fetched by the first local process only, and the barrier that should let
the others wait for it was indented into the same branch: the local master waits at a barrier the
other process never calls, while that process goes on to the weight broadcast.

Modelled on huggingface/transformers-bloom-inference#40 "fix: deadlock in
`bloom-ds-inference.py`" (https://github.com/huggingface/transformers-bloom-inference/pull/40):
"rank 0 calls `dist.barrier()` while other processes don't".
"""
import os
import tempfile

import torch
import torch.distributed as dist


def fetch_weights(path):
    torch.manual_seed(0)
    torch.save({"w": torch.randn(3, 3)}, path)


def main():
    dist.init_process_group("gloo")
    is_first = int(os.environ.get("LOCAL_RANK", "0")) == 0
    path = os.path.join(tempfile.gettempdir(), f"blind-weights-{os.environ.get('MASTER_PORT', 'x')}.pt")
    if is_first:
        fetch_weights(path)
        dist.barrier()  # expect: BCL005
    w = torch.zeros(3, 3)
    if is_first:
        w = torch.load(path)["w"]
    dist.broadcast(w, src=0)
    print(f"rank {dist.get_rank()}: {w.sum().item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
