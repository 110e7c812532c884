# verify: hang,error
"""Prompts split between processes without padding, each score gathered inside the loop.

Modelled on https://github.com/huggingface/accelerate/issues/4053 (three prompts on two
processes through `split_between_processes`, padding off) and the distributed-inference guide of
https://github.com/huggingface/accelerate/pull/1410, which warns that gathering the results of
an odd split needs `apply_padding=True`.

Five prompts on two processes: process 0 scores three, process 1 two. Each score is gathered as
soon as it is computed, so process 0 enters a third `gather` that process 1 never joins. The
processes part ways through the amount of data each one holds.
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
    with accelerator.split_between_processes(PROMPTS) as mine:
        for prompt in mine:
            with torch.no_grad():
                score = scorer(prompt)
            gathered.append(accelerator.gather(score))  # expect: BCL005
    scores = torch.cat(gathered)
    accelerator.print("scores", [round(s, 4) for s in scores.tolist()])


if __name__ == "__main__":
    main()
