# verify: ok
"""Hand-fixed twin of auto_batch_size_per_process_reduce.py.

Each process still probes its own memory with `find_executable_batch_size`, but the processes
then agree on the smallest batch size found (gathered with `accelerator.gather`, then `min`), so
every process scores its share in the same number of batches and the per-batch reduce pairs
(the agreement that huggingface/lighteval#896,
https://github.com/huggingface/lighteval/issues/896, is missing).
"""
from dataclasses import dataclass

import torch
from accelerate import Accelerator
from accelerate.utils import find_executable_batch_size

PROMPTS = [f"question {i}: what is {i} plus {i}?" for i in range(20)]


@dataclass
class EvalConfig:
    host_memory_mb: int = 64
    model_mb: int = 8
    reference_mb_per_item: int = 1
    activation_mb_per_sample: int = 4
    starting_batch_size: int = 16


class MemoryBudget:
    """What a forward pass of `batch_size` needs, against what this process has left."""

    def __init__(self, cfg: EvalConfig, resident_mb: int):
        self.cfg = cfg
        self.resident_mb = resident_mb

    def check(self, batch_size: int) -> None:
        need = batch_size * self.cfg.activation_mb_per_sample
        if need > self.cfg.host_memory_mb - self.resident_mb:
            raise RuntimeError(
                f"DefaultCPUAllocator: can't allocate memory: you tried to allocate {need << 20} bytes."
            )


def detect_batch_size(budget: MemoryBudget, starting: int) -> int:
    @find_executable_batch_size(starting_batch_size=starting)
    def probe(batch_size):
        budget.check(batch_size)
        return batch_size

    return probe()


def load_references(accelerator: Accelerator):
    # only the main process scores against the references
    if not accelerator.is_main_process:
        return None
    return {prompt: str(2 * i) for i, prompt in enumerate(PROMPTS)}


class Scorer:
    def __init__(self, accelerator: Accelerator, batch_size: int):
        self.accelerator = accelerator
        self.batch_size = batch_size

    def forward(self, prompts: list) -> torch.Tensor:
        lengths = torch.tensor([len(p.split()) for p in prompts], dtype=torch.float32)
        return -lengths.log()  # stand-in log-likelihood per prompt

    def score(self, prompts: list) -> torch.Tensor:
        scores, seen = [], torch.zeros(1)
        for start in range(0, len(prompts), self.batch_size):
            batch = prompts[start:start + self.batch_size]
            scores.append(self.forward(batch))
            tokens = torch.tensor([float(sum(len(p.split()) for p in batch))])
            seen += self.accelerator.reduce(tokens, reduction="sum")
            self.accelerator.print(f"scored {int(seen.item())} tokens so far")
        return torch.cat(scores)


def main():
    accelerator = Accelerator()
    cfg = EvalConfig()
    references = load_references(accelerator)
    resident = cfg.model_mb + (len(references) * cfg.reference_mb_per_item if references else 0)
    local_batch_size = detect_batch_size(MemoryBudget(cfg, resident), cfg.starting_batch_size)
    found = accelerator.gather(torch.tensor([local_batch_size], device=accelerator.device))
    batch_size = int(found.min())
    print(f"[process {accelerator.process_index}] batch size {batch_size}")
    with accelerator.split_between_processes(PROMPTS) as mine:
        local_scores = Scorer(accelerator, batch_size).score(mine)
    mean_score = accelerator.reduce(local_scores.sum().reshape(1), reduction="sum") / len(PROMPTS)
    accelerator.print(f"mean log-likelihood {mean_score.item():.4f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
