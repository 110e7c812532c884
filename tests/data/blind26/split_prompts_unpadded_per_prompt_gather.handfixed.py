# verify: ok
"""Hand fix of split_prompts_unpadded_per_prompt_gather.py: `apply_padding=True` gives every
process three prompts (process 1 repeats its last one), so both gather three times; the
gathered scores are put back in prompt order and the padded one dropped.
"""
import torch
from accelerate import Accelerator
from torch import nn

PROMPTS = [
    "a red fox in tall grass",
    "two blue cars at a crossing",
    "a quiet harbour at dawn",
    "snow on the pines",
    "three paper boats on a pond",
]


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.EmbeddingBag(256, 16, mode="mean")
        self.head = nn.Linear(16, 1)

    def forward(self, text):
        ids = torch.tensor([list(text.encode("utf-8"))])
        return self.head(self.embed(ids)).reshape(1)


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    scorer = Scorer().eval()
    gathered = []
    with accelerator.split_between_processes(PROMPTS, apply_padding=True) as mine:
        for prompt in mine:
            with torch.no_grad():
                score = scorer(prompt)
            gathered.append(accelerator.gather(score))
    scores = torch.stack(gathered, 1).flatten()[: len(PROMPTS)]
    accelerator.print("scores", [round(s, 4) for s in scores.tolist()])


if __name__ == "__main__":
    main()
