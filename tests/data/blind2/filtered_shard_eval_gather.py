# verify: hang
"""Split the eval set by process, then drop over-long samples on each shard.

Modelled on https://github.com/huggingface/datasets/issues/6719: filtering after
`split_dataset_by_node` leaves "shards that are not equal sizes due to unequal samples filtered
from each one", and the distributed job hangs. Each process here loops over its own number of
batches and gathers per batch.
"""
from dataclasses import dataclass

import torch
from accelerate import Accelerator

RECORDS = [
    "a short line", "the cat sat", "one two three", "red green blue", "up and down", "to be or not",
    "far too long a sentence to keep in this eval set", "ok then", "yes no maybe",
    "another sentence that is much too long for the model", "tiny words here but still nine of them", "a much longer sample that we drop",
]


@dataclass
class EvalConfig:
    max_words: int = 6
    batch_size: int = 2


def batches(samples, size):
    for start in range(0, len(samples), size):
        yield samples[start:start + size]


def score(batch):
    return torch.tensor([float(len(text)) for text in batch])


def evaluate(accelerator, cfg):
    with accelerator.split_between_processes(RECORDS) as shard:
        kept = [text for text in shard if len(text.split()) <= cfg.max_words]
    totals = []
    for batch in batches(kept, cfg.batch_size):
        totals.append(accelerator.gather_for_metrics(score(batch)))  # expect: BCL005
    return torch.cat(totals).mean().item()


def main():
    accelerator = Accelerator()
    mean_len = evaluate(accelerator, EvalConfig())
    accelerator.print(f"mean length {mean_len:.2f}")


if __name__ == "__main__":
    main()
