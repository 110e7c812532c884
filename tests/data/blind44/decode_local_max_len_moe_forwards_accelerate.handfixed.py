# verify: ok
"""Hand fix: every process decodes for the longest max length of any process; finished ones keep joining.

Modelled on https://github.com/microsoft/Tutel/issues/182: a fairseq-style generator sets
max_len from the source length, so one device runs more decoder steps than the other; every step
goes through an expert-parallel MoE layer whose all_to_all the other device no longer joins.
"""
import torch
import torch.distributed as dist
from accelerate import Accelerator

D, E, CAP, V = 4, 2, 3, 8
SOURCES = [[1, 2, 3], [4, 5, 6, 7, 1, 2], [3, 3], [5, 1, 2, 6]]


class ExpertParallelFFN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(V, D)
        self.local_expert = torch.nn.Linear(D, D)
        self.head = torch.nn.Linear(D, V)

    def forward(self, ids):
        h = self.embed(ids)[-CAP:]
        buf = h.new_zeros(E, CAP, D)
        buf[ids[-1] % E, : h.shape[0]] = h
        recv = torch.empty_like(buf)
        dist.all_to_all_single(recv, buf)
        back = torch.empty_like(recv)
        dist.all_to_all_single(back, self.local_expert(recv))
        return self.head(back.sum(dim=(0, 1)))


def generate(accelerator, model, src, a=1, b=2):
    max_len = a * len(src) + b
    steps = accelerator.reduce(torch.tensor(max_len), reduction="max")
    out = list(src)
    for _ in range(int(steps)):
        nxt = int(model(torch.tensor(out)).argmax())
        if len(out) - len(src) < max_len:
            out.append(nxt)
    return out


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = ExpertParallelFFN()
    with torch.no_grad(), accelerator.split_between_processes(SOURCES) as mine:
        hyps = [generate(accelerator, model, src) for src in mine]
    accelerator.wait_for_everyone()
    print(f"process {accelerator.process_index}: {hyps}")
    accelerator.end_training()


if __name__ == "__main__":
    main()
