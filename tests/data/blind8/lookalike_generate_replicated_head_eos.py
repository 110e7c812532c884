# verify: ok
"""Look-alike of zero3_generate_eos_per_rank.py: the same EOS-driven decode loop, but nothing in it communicates.

The output layer is an ordinary, replicated `nn.Linear` (every process holds the whole bigram
table), so leaving the loop at each process's own EOS changes nothing for the others; the only
collective is the all-reduce of the token count after decoding, which every process reaches once.
"""
import torch
import torch.distributed as dist
from torch import nn

VOCAB, EOS, MAX_NEW = 8, 0, 6
NEXT_TOKEN = {0: 0, 1: 2, 2: 0, 3: 4, 4: 5, 5: 6, 6: 0, 7: 3}
PROMPTS = [[7, 1], [5, 3], [4, 2], [6, 7]]


class BigramLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, VOCAB, _weight=torch.eye(VOCAB))
        self.head = nn.Linear(VOCAB, VOCAB, bias=False)
        with torch.no_grad():
            self.head.weight.zero_()
            for token, following in NEXT_TOKEN.items():
                self.head.weight[following, token] = 1.0

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(ids[-1:]))[0]


@torch.no_grad()
def generate(model, prompt):
    ids = list(prompt)
    for _ in range(MAX_NEW):
        logits = model(torch.tensor(ids))
        token = int(logits.argmax())
        ids.append(token)
        if token == EOS:
            break
    return ids[len(prompt):]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    model = BigramLM()
    produced = torch.zeros(1, dtype=torch.long)
    for prompt in PROMPTS[rank::world]:
        completion = generate(model, prompt)
        produced += len(completion)
        print(f"[rank {rank}] {prompt} -> {completion}")
    dist.all_reduce(produced)
    if rank == 0:
        print(f"{int(produced.item())} tokens generated")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
