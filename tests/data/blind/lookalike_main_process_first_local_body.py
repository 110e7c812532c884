# verify: ok
"""Looks like a collective under `main_process_first()`, but the block only reads and tokenizes
(local work); the gather of the token counts follows the block and runs on every process."""
import torch
from accelerate import Accelerator
from accelerate.utils import gather


def tokenize(texts):
    return [t.split() for t in texts]


def main():
    accelerator = Accelerator()
    shard = ["the cat sat", "on the mat"] if accelerator.process_index == 0 else ["a dog ran", "far away"]
    with accelerator.main_process_first():
        tokens = tokenize(shard)
        counts = torch.tensor([sum(len(t) for t in tokens)])
    all_counts = gather(counts)
    accelerator.print(f"tokens per process: {all_counts.tolist()}")
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
