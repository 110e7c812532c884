# verify: ok
"""Hand-fixed twin of empty_share_early_return_gather.py: every process gathers every round.

Modelled on bo-ke/llm-internal-medicine#45 (https://github.com/bo-ke/llm-internal-medicine/pull/45),
whose fix drops the early return. `split_between_processes(..., apply_padding=True)` hands a
process with no prompt of its own a copy of the last one, every process gathers one score, and
the padding is cut off the gathered list.
"""
import torch
from accelerate import Accelerator

PROMPTS = ["a short one", "a slightly longer prompt", "tiny", "medium sized prompt", "last"]


def score(prompt: str) -> float:
    return len(prompt.split()) / len(prompt)


def score_round(accelerator: Accelerator, prompts: list[str]) -> list[float]:
    with accelerator.split_between_processes(prompts, apply_padding=True) as mine:
        local = torch.tensor([score(p) for p in mine])
    return accelerator.gather(local).tolist()[: len(prompts)]


def main() -> None:
    accelerator = Accelerator()
    per_round = accelerator.num_processes
    results = []
    for start in range(0, len(PROMPTS), per_round):
        results.extend(score_round(accelerator, PROMPTS[start:start + per_round]))
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        print(f"{len(results)} scores, mean {sum(results) / len(results):.3f}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
