# verify: ok
"""Look-alike: a file-existence test guarding an all-reduce, on a shared path written before a barrier.

Rank 0 publishes the vocabulary into the job's shared directory (``blind9-<addr>-<port>-vocab``
under the system temp dir), then every rank meets at ``dist.barrier()``; only after it does each
rank test ``vocab_path.exists()``. The path is the same file for every rank and nothing writes or
removes it after the barrier, so every rank gets the same answer and takes the branch that
all-reduces the token counts.
"""
import json
import os
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist

TOKENS = {"the": 0, "cat": 1, "sat": 2, "on": 3, "mat": 4}
TEXT = ["the cat sat", "on the mat", "the mat", "cat on the mat"]


def publish_vocab(path):
    tmp = path.with_suffix(".part")
    tmp.write_text(json.dumps(TOKENS))
    tmp.rename(path)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    shared = Path(tempfile.gettempdir()) / f"blind9-{os.environ['MASTER_ADDR']}-{os.environ['MASTER_PORT']}-vocab"
    shared.mkdir(parents=True, exist_ok=True)
    vocab_path = shared / "vocab.json"
    if rank == 0 and not vocab_path.exists():
        publish_vocab(vocab_path)
    dist.barrier()

    counts = torch.zeros(len(TOKENS))
    if vocab_path.exists():
        vocab = json.loads(vocab_path.read_text())
        for line in TEXT[rank::world]:
            for word in line.split():
                counts[vocab[word]] += 1
        dist.all_reduce(counts)
    else:
        print(f"rank {rank}: no vocabulary, counts left at zero")
    if rank == 0:
        print(f"token counts {counts.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
