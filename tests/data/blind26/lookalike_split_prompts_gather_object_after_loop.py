# verify: ok
"""Look-alike of split_prompts_unpadded_per_prompt_gather.py: the same unpadded split (three
prompts on process 0, two on process 1), but each process keeps its scores and gathers them
once, after the loop, with `gather_object`, which accepts lists of different lengths.
"""
import torch
from accelerate import Accelerator
from accelerate.utils import gather_object
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
    local = []
    with accelerator.split_between_processes(PROMPTS) as mine:
        for prompt in mine:
            with torch.no_grad():
                score = scorer(prompt)
            local.append(round(score.item(), 4))
    scores = gather_object(local)
    accelerator.print("scores", scores)


if __name__ == "__main__":
    main()
