# verify: hang
"""Scoring in rounds, with an early return for a process whose share of the round is empty.

Modelled on bo-ke/llm-internal-medicine#45 (https://github.com/bo-ke/llm-internal-medicine/pull/45),
"keep gather_and_aggregate collective on ranks with no metrics": an early return when the local
data was empty skipped the gather on that rank, and the others blocked in it; and on
huggingface/accelerate#3393 (https://github.com/huggingface/accelerate/issues/3393), where
`split_between_processes` gets fewer inputs than there are processes.

Five prompts are scored in rounds of two (one per process). The last round holds one prompt:
`split_between_processes` gives it to process 0 and an empty list to process 1, which returns
before `accelerator.gather` and goes on to the final `wait_for_everyone()`.
"""
import torch
from accelerate import Accelerator

PROMPTS = ["a short one", "a slightly longer prompt", "tiny", "medium sized prompt", "last"]


def score(prompt: str) -> float:
    return len(prompt.split()) / len(prompt)


def score_round(accelerator: Accelerator, prompts: list[str]) -> list[float]:
    with accelerator.split_between_processes(prompts) as mine:
        if not mine:  # expect: BCL005
            return []
        local = torch.tensor([score(p) for p in mine])
    return accelerator.gather(local).tolist()


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
