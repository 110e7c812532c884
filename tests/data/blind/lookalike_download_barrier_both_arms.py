# verify: ok
"""Looks like a barrier inside the local master's branch, but the other arm has its own barrier,
so every process calls exactly one."""
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
    path = os.path.join(tempfile.gettempdir(), f"blind-weights-la-{os.environ.get('MASTER_PORT', 'x')}.pt")
    if is_first:
        fetch_weights(path)
        dist.barrier()
    else:
        dist.barrier()
    w = torch.load(path)["w"]
    print(f"rank {dist.get_rank()}: {w.sum().item():.3f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
